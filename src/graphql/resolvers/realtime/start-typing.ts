import { requireActor } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

export const startTyping: Resolver<unknown, { conversationId: string }> = (
  _parent,
  { conversationId },
  ctx,
) => ctx.services.typing.startTyping(requireActor(ctx), conversationId);
