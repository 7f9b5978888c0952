import { requireActor } from '../../context.js';
import type { QueryResolvers } from '../../generated/resolver-types.js';

export const pipelines: QueryResolvers['pipelines'] = (_parent, { serverId, ...page }, ctx) =>
  ctx.services.commands.pipelines.list(requireActor(ctx), serverId, page);
