import type { KeysetArgs } from '../../../services/paging/index.js';
import { requireActor } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

export const channels: Resolver<
  unknown,
  KeysetArgs & { serverId: string; includeArchived?: boolean | null }
> = (_parent, { serverId, includeArchived, ...page }, ctx) =>
  ctx.services.channels.list(requireActor(ctx), serverId, { includeArchived, page });
