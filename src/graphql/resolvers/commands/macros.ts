import { requireActor } from '../../context.js';
import type { QueryResolvers } from '../../generated/resolver-types.js';

export const macros: QueryResolvers['macros'] = (_parent, { serverId, ...page }, ctx) =>
  ctx.services.commands.macros.list(requireActor(ctx), serverId, page);
