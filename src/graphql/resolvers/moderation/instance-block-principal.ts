import type { MutationResolvers } from '../../generated/resolver-types.js';

import { requireActor } from '../../context.js';

export const instanceBlockPrincipal: MutationResolvers['instanceBlockPrincipal'] = (
  _parent,
  args,
  ctx,
) =>
  ctx.services.moderation.blocks.block(requireActor(ctx), {
    principalId: args.principalId,
    reason: args.reason,
    cascade: args.cascade,
  });
