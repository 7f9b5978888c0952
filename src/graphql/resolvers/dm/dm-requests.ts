import { requireActor } from '../../context.js';
import type { QueryResolvers } from '../../generated/resolver-types.js';

export const dmRequests: QueryResolvers['dmRequests'] = (_parent, args, ctx) =>
  ctx.services.dm.pendingRequests(requireActor(ctx), args);
