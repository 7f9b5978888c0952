import { requireActor } from '../../context.js';
import type { QueryResolvers } from '../../generated/resolver-types.js';

export const inboxConversations: QueryResolvers['inboxConversations'] = (_parent, args, ctx) =>
  ctx.services.conversations.reading.inbox(requireActor(ctx), args);
