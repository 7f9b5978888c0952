import type { Resolver } from '../../resolver-types.js';

import { requireActor } from '../../context.js';

export const instanceBlockPrincipal: Resolver<
  unknown,
  { principalId: string; reason?: string | null; cascade?: boolean | null }
> = (_parent, args, ctx) =>
  ctx.services.moderation.blocks.block(requireActor(ctx), {
    principalId: args.principalId,
    reason: args.reason,
    cascade: args.cascade,
  });
