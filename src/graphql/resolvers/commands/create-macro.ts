import { requireActor } from '../../context.js';
import type { MutationResolvers } from '../../generated/resolver-types.js';

export const createMacro: MutationResolvers['createMacro'] = (_parent, args, ctx) =>
  ctx.services.commands.macros.create(requireActor(ctx), args.input);
