import { requireActor } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

export const addReaction: Resolver<unknown, { messageId: string; emoji: string }> = (
  _parent,
  args,
  ctx,
) => ctx.services.messages.reactions.addReaction(requireActor(ctx), args.messageId, args.emoji);
