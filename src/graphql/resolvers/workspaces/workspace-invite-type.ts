import { keyCursor } from '../../../services/paging/index.js';
import type { InviteView } from '../../../services/workspaces/index.js';
import type { Resolver } from '../../resolver-types.js';

/** Each invite's place in `workspaceInvites` and `Workspace.invites`. */
export const WorkspaceInvite = {
  cursor: ((i) => keyCursor(i.createdAt, i.id)) as Resolver<InviteView>,
};
