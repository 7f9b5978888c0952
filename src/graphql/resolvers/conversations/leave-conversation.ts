import { requireSession } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

export const leaveConversation: Resolver<unknown, { conversationId: string }> = (
  _parent,
  args,
  ctx,
) => ctx.app.services.conversations.leave(requireSession(ctx).accountId, args.conversationId);
