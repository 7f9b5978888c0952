import { requireActor } from '../../context.js';
import type { MutationResolvers } from '../../generated/resolver-types.js';

export const deleteMacro: MutationResolvers['deleteMacro'] = (_parent, args, ctx) =>
  ctx.services.commands.macros.delete(requireActor(ctx), args.id);
