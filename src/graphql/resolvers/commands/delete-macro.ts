import { requireActor } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

export const deleteMacro: Resolver<unknown, { id: string }> = (_parent, args, ctx) =>
  ctx.services.commands.macros.delete(requireActor(ctx), args.id);
