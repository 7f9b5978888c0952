import { requireActor } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

export const searchLanguage: Resolver<unknown, { serverId?: string | null }> = (
  _parent,
  { serverId },
  ctx,
) => ctx.services.search.language(requireActor(ctx), serverId);

export const setSearchLanguage: Resolver<
  unknown,
  { language?: string | null; serverId?: string | null }
> = (_parent, { language, serverId }, ctx) =>
  ctx.services.search.setLanguage(requireActor(ctx), language ?? null, serverId);
