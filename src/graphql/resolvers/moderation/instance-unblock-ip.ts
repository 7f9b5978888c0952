import type { MutationResolvers } from '../../generated/resolver-types.js';

import { requireActor } from '../../context.js';

export const instanceUnblockIp: MutationResolvers['instanceUnblockIp'] = (_parent, args, ctx) =>
  ctx.services.ipBlocks.unblock(requireActor(ctx), args.cidr);
