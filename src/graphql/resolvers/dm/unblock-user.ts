import { requireActor } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

export const unblockUser: Resolver<unknown, { userId: string }> = (_parent, args, ctx) =>
  ctx.services.dm.unblock(requireActor(ctx), args.userId);
