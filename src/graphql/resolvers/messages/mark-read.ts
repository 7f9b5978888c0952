import { requireActor } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

export const markRead: Resolver<unknown, { conversationId: string; messageId: string }> = (
  _parent,
  args,
  ctx,
) => ctx.services.messages.reading.markRead(requireActor(ctx), args.conversationId, args.messageId);
