import { requireActor } from '../../context.js';
import type { QueryResolvers } from '../../generated/resolver-types.js';

export const customEmojis: QueryResolvers['customEmojis'] = (_parent, { serverId, ...page }, ctx) =>
  ctx.services.emoji.list(requireActor(ctx), serverId, page);
