import { requireActor } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

export const removeReaction: Resolver<unknown, { messageId: string; emoji: string }> = (
  _parent,
  args,
  ctx,
) => ctx.services.messages.reactions.removeReaction(requireActor(ctx), args.messageId, args.emoji);
