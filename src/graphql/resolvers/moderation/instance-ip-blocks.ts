import { requireActor } from '../../context.js';
import type { QueryResolvers } from '../../generated/resolver-types.js';

export const instanceIpBlocks: QueryResolvers['instanceIpBlocks'] = (_parent, args, ctx) =>
  ctx.services.ipBlocks.list(requireActor(ctx), args);
