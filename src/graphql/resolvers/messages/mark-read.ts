import { requireSession } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

export const markRead: Resolver<unknown, { conversationId: string; messageId: string }> = (
  _parent,
  args,
  ctx,
) =>
  ctx.app.services.messages.markRead(
    requireSession(ctx).accountId,
    args.conversationId,
    args.messageId,
  );
