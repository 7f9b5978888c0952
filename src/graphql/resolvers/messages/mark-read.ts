import { requireActor } from '../../context.js';
import type { MutationResolvers } from '../../generated/resolver-types.js';

export const markRead: MutationResolvers['markRead'] = (_parent, args, ctx) =>
  ctx.services.messages.reading.markRead(requireActor(ctx), args.conversationId, args.messageId);
