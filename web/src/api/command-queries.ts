// The command system's documents (docs/commands.md): the registry, runs, macros and keybinds.

export const COMMAND = `name description capability destructive surfaces
  arguments { name type description required } source { kind pluginId workspacePluginId }`;
export const COMMANDS = `query Commands($surface: CommandSurface!, $context: CommandContextInput) {
  commands(surface: $surface, context: $context) { ${COMMAND} } }`;

const RUN = `status message messageId auditId args
  command { name source { kind pluginId workspacePluginId } }
  confirmation { token summary expiresAt }`;
export const EXECUTE_COMMAND = `mutation ExecuteCommand($input: ExecuteCommandInput!) {
  executeCommand(input: $input) { ${RUN} } }`;

export const MACRO = `id serverId ownerId name description params steps { command plugin args }`;
/** Macros and keybinds come a page at a time, oldest first (docs/api.md, Pagination). */
export const COMMAND_LIST_PAGE = 100;
export const MACROS = `query Macros($serverId: ID, $after: String, $limit: Int) {
  macros(serverId: $serverId, after: $after, limit: $limit) { ${MACRO} cursor } }`;
export const CREATE_MACRO = `mutation CreateMacro($input: CreateMacroInput!) { createMacro(input: $input) { ${MACRO} } }`;
export const DELETE_MACRO = `mutation DeleteMacro($id: ID!) { deleteMacro(id: $id) }`;
export const EXECUTE_MACRO = `mutation ExecuteMacro($input: ExecuteMacroInput!) { executeMacro(input: $input) {
  status failedStep error { code message } confirmation { token summary expiresAt }
  steps { ${RUN} } } }`;

export const KEYBIND = `id serverId ownerId chord command macroId args`;
export const KEYBINDS = `query Keybinds($serverId: ID, $after: String, $limit: Int) {
  keybinds(serverId: $serverId, after: $after, limit: $limit) { ${KEYBIND} cursor } }`;
export const SET_KEYBIND = `mutation SetKeybind($input: SetKeybindInput!) { setKeybind(input: $input) { ${KEYBIND} } }`;
export const DELETE_KEYBIND = `mutation DeleteKeybind($id: ID!) { deleteKeybind(id: $id) }`;
