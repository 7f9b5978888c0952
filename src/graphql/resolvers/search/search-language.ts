import { requireActor } from '../../context.js';
import type { MutationResolvers, QueryResolvers } from '../../generated/resolver-types.js';

export const searchLanguage: QueryResolvers['searchLanguage'] = (_parent, { serverId }, ctx) =>
  ctx.services.search.language(requireActor(ctx), serverId);

export const setSearchLanguage: MutationResolvers['setSearchLanguage'] = (
  _parent,
  { language, serverId },
  ctx,
) => ctx.services.search.setLanguage(requireActor(ctx), language ?? null, serverId);
