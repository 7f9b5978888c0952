// The commands area's surface: what other areas and the edges use of it (docs/architecture.md,
// "Area surfaces"). The area's own files import each other directly, never this file.
export type { ExecuteInput } from './command-service.js';
export { CommandSystem } from './command-system.js';
export type { KeybindView } from './keybinds.js';
export type { MacroView } from './macros.js';
export type { PipelineView } from './pipelines.js';
export type { ArgDef } from './types.js';
