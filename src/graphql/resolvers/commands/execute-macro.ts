import { requireActor } from '../../context.js';
import type { MutationResolvers } from '../../generated/resolver-types.js';

export const executeMacro: MutationResolvers['executeMacro'] = (_parent, args, ctx) =>
  ctx.services.commands.macros.execute(requireActor(ctx), args.input);
