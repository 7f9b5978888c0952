import { keyCursor } from '../../../services/paging/index.js';
import type { TypeResolvers } from '../../generated/resolver-types.js';

/** A plugin's place in `workspacePlugins`, to pass as `after` or `before`. */
export const WorkspacePlugin: TypeResolvers<'WorkspacePlugin'> = {
  cursor: (p) => keyCursor(p.createdAt, p.id),
};
