import { requireActor } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

export const claimKeyPackages: Resolver<unknown, { conversationId: string; userId: string }> = (
  _p,
  args,
  ctx,
) =>
  ctx.services.mls.keyPackages.claimKeyPackages(
    requireActor(ctx),
    args.conversationId,
    args.userId,
  );
