import { keyCursor } from '../../../services/paging/index.js';
import type { TypeResolvers } from '../../generated/resolver-types.js';

/** Each invite's place in `workspaceInvites` and `Workspace.invites`. */
export const WorkspaceInvite: TypeResolvers<'WorkspaceInvite'> = {
  cursor: (i) => keyCursor(i.createdAt, i.id),
};
