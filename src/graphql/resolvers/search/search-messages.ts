import { requireActor } from '../../context.js';
import type { SearchOrder } from '../../../services/search/index.js';
import type { Resolver } from '../../resolver-types.js';

interface Filter {
  serverId?: string | null;
  conversationId?: string | null;
  authorId?: string | null;
  from?: Date | null;
  to?: Date | null;
  inThread?: boolean | null;
  hasAttachment?: boolean | null;
}

export const searchMessages: Resolver<
  unknown,
  {
    query: string;
    filter?: Filter | null;
    order?: SearchOrder | null;
    after?: string | null;
    before?: string | null;
    limit?: number | null;
  }
> = (_parent, { query, filter, order, after, before, limit }, ctx) =>
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
