import { requireActor } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

export const blockUser: Resolver<unknown, { userId: string }> = (_parent, args, ctx) =>
  ctx.services.dm.block(requireActor(ctx), args.userId);
