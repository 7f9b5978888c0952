import type { WorkspacePluginView } from '../../../services/plugins/index.js';
import { keyCursor } from '../../../services/paging/index.js';
import type { Resolver } from '../../resolver-types.js';

/** A plugin's place in `workspacePlugins`, to pass as `after` or `before`. */
export const WorkspacePlugin = {
  cursor: ((p) => keyCursor(p.createdAt, p.id)) as Resolver<WorkspacePluginView>,
};
