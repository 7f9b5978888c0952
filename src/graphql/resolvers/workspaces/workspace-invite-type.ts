import { keyCursor } from '../../../services/paging/keyset.js';
import type { InviteView } from '../../../services/workspaces/invite-service.js';
import type { Resolver } from '../../resolver-types.js';

/** Each invite's place in `workspaceInvites` and `Workspace.invites`. */
export const WorkspaceInvite = {
  cursor: ((i) => keyCursor(i.createdAt, i.id)) as Resolver<InviteView>,
};
