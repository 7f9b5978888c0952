import { requireActor } from '../../context.js';
import type { QueryResolvers } from '../../generated/resolver-types.js';

export const searchMembers: QueryResolvers['searchMembers'] = (
  _parent,
  { serverId, query, limit },
  ctx,
) => ctx.services.search.members(requireActor(ctx), serverId, query, limit);
