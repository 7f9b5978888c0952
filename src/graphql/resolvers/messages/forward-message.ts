import { requireActor } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

export const forwardMessage: Resolver<unknown, { messageId: string; toConversationId: string }> = (
  _parent,
  args,
  ctx,
) =>
  ctx.services.messages.sending.forward(requireActor(ctx), args.messageId, args.toConversationId);
