import { requireActor } from '../../context.js';
import type { QueryResolvers } from '../../generated/resolver-types.js';

export const mlsGroupState: QueryResolvers['mlsGroupState'] = (_p, args, ctx) =>
  ctx.services.mls.groups.groupState(requireActor(ctx), args.conversationId);
