import { requireActor } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

export const channels: Resolver<unknown, { serverId: string; includeArchived?: boolean | null }> = (
  _parent,
  { serverId, includeArchived },
  ctx,
) => ctx.services.channels.list(requireActor(ctx), serverId, { includeArchived });
