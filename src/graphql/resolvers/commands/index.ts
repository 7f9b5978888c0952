import type { Resolvers } from '../../resolver-types.js';

import { commandAudit } from './command-audit.js';
import { commandDiscover } from './command-discover.js';
import { commands } from './commands.js';
import { createMacro } from './create-macro.js';
import { createPipeline } from './create-pipeline.js';
import { deleteKeybind } from './delete-keybind.js';
import { deleteMacro } from './delete-macro.js';
import { deletePipeline } from './delete-pipeline.js';
import { executeCommand } from './execute-command.js';
import { executeMacro } from './execute-macro.js';
import { keybinds } from './keybinds.js';
import { Keybind, Macro, Pipeline } from './list-cursors.js';
import { macros } from './macros.js';
import { pipelines } from './pipelines.js';
import { setKeybind } from './set-keybind.js';
import { setPipelineEnabled } from './set-pipeline-enabled.js';

export const commandResolvers: Resolvers = {
  Query: { commands, commandDiscover, macros, keybinds, pipelines, commandAudit },
  Mutation: {
    executeCommand,
    executeMacro,
    createMacro,
    deleteMacro,
    setKeybind,
    deleteKeybind,
    createPipeline,
    setPipelineEnabled,
    deletePipeline,
  },
  Macro,
  Keybind,
  Pipeline,
};
