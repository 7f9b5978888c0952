import { requireActor } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';
import type { ExecuteInput } from '../../../services/commands/index.js';

export const executeCommand: Resolver<unknown, { input: ExecuteInput }> = (_parent, args, ctx) =>
  ctx.services.commands.run.execute(requireActor(ctx), args.input);
