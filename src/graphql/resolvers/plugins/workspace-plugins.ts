import { requireActor } from '../../context.js';
import type { QueryResolvers } from '../../generated/resolver-types.js';

export const workspacePlugins: QueryResolvers['workspacePlugins'] = (
  _parent,
  { serverId, ...page },
  ctx,
) => ctx.services.plugins.list(requireActor(ctx), serverId, page);
