import { requireActor } from '../../context.js';
import type { QueryResolvers } from '../../generated/resolver-types.js';

export const mlsWelcomes: QueryResolvers['mlsWelcomes'] = (_p, args, ctx) =>
  ctx.services.mls.groups.welcomes(requireActor(ctx), args);
