import type { Resolvers } from '../../resolver-types.js';

import { WorkspacePlugin } from './workspace-plugin-type.js';
import { addWorkspacePlugin } from './add-workspace-plugin.js';
import { removeWorkspacePlugin } from './remove-workspace-plugin.js';
import { updateWorkspacePlugin } from './update-workspace-plugin.js';
import { workspacePlugins } from './workspace-plugins.js';

export const pluginResolvers: Resolvers = {
  Query: { workspacePlugins },
  Mutation: { addWorkspacePlugin, updateWorkspacePlugin, removeWorkspacePlugin },
  WorkspacePlugin,
};
