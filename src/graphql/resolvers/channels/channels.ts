import { requireActor } from '../../context.js';
import type { QueryResolvers } from '../../generated/resolver-types.js';

export const channels: QueryResolvers['channels'] = (
  _parent,
  { serverId, includeArchived, ...page },
  ctx,
) => ctx.services.channels.list(requireActor(ctx), serverId, { includeArchived, page });
