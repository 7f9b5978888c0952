import { requireActor } from '../../context.js';
import type { QueryResolvers } from '../../generated/resolver-types.js';

export const searchChannels: QueryResolvers['searchChannels'] = (
  _parent,
  { serverId, query, limit },
  ctx,
) => ctx.services.search.channels(requireActor(ctx), serverId, query, limit);
