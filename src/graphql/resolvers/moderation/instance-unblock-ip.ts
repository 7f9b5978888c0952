import type { Resolver } from '../../resolver-types.js';

import { requireActor } from '../../context.js';

export const instanceUnblockIp: Resolver<unknown, { cidr: string }> = (_parent, args, ctx) =>
  ctx.services.ipBlocks.unblock(requireActor(ctx), args.cidr);
