import type { Resolver } from '../../resolver-types.js';

import { requireActor } from '../../context.js';

export const instanceUnblockPrincipal: Resolver<unknown, { principalId: string }> = (
  _parent,
  args,
  ctx,
) => ctx.services.moderation.blocks.unblock(requireActor(ctx), args.principalId);
