import { requireActor } from '../../context.js';
import type { QueryResolvers } from '../../generated/resolver-types.js';

export const searchMessages: QueryResolvers['searchMessages'] = (
  _parent,
  { query, filter, order, after, before, limit },
  ctx,
) =>
  ctx.services.search.messages(requireActor(ctx), {
    query,
    order,
    after,
    before,
    limit,
    workspaceId: filter?.serverId,
    conversationId: filter?.conversationId,
    authorId: filter?.authorId,
    from: filter?.from ? filter.from.getTime() : null,
    to: filter?.to ? filter.to.getTime() : null,
    inThread: filter?.inThread,
    hasAttachment: filter?.hasAttachment,
  });
