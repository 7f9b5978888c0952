// The workspace plugin registry's documents (docs/plugins.md).

const PLUGIN = `id pluginId name version description author { name email url } capabilities
  enabled settings settingsSchema bundleSha256 bundleSize
  commands { name description arguments { name type description required } }
  keybinds { keys command description }`;
export const WORKSPACE_PLUGINS = `query WorkspacePlugins($serverId: ID!) {
  workspacePlugins(serverId: $serverId) { ${PLUGIN} } }`;
export const ADD_PLUGIN = `mutation AddWorkspacePlugin($input: AddWorkspacePluginInput!) {
  addWorkspacePlugin(input: $input) { ${PLUGIN} } }`;
export const UPDATE_PLUGIN = `mutation UpdateWorkspacePlugin($input: UpdateWorkspacePluginInput!) {
  updateWorkspacePlugin(input: $input) { ${PLUGIN} } }`;
export const REMOVE_PLUGIN = `mutation RemoveWorkspacePlugin($id: ID!) {
  removeWorkspacePlugin(id: $id) { id } }`;
