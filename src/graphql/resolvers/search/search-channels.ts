import { requireActor } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

export const searchChannels: Resolver<
  unknown,
  { serverId: string; query: string; limit?: number | null }
> = (_parent, { serverId, query, limit }, ctx) =>
  ctx.services.search.channels(requireActor(ctx), serverId, query, limit);
