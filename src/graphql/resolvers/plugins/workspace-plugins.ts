import type { KeysetArgs } from '../../../services/paging/index.js';
import { requireActor } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

export const workspacePlugins: Resolver<unknown, { serverId: string } & KeysetArgs> = (
  _parent,
  { serverId, ...page },
  ctx,
) => ctx.services.plugins.list(requireActor(ctx), serverId, page);
