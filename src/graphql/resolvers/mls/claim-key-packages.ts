import { requireActor } from '../../context.js';
import type { MutationResolvers } from '../../generated/resolver-types.js';

export const claimKeyPackages: MutationResolvers['claimKeyPackages'] = (_p, args, ctx) =>
  ctx.services.mls.keyPackages.claimKeyPackages(
    requireActor(ctx),
    args.conversationId,
    args.userId,
  );
