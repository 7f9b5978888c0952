import type { MutationResolvers } from '../../generated/resolver-types.js';

import { requireActor } from '../../context.js';

export const instanceUnblockPrincipal: MutationResolvers['instanceUnblockPrincipal'] = (
  _parent,
  args,
  ctx,
) => ctx.services.moderation.blocks.unblock(requireActor(ctx), args.principalId);
