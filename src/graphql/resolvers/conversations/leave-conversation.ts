import { requireActor } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

export const leaveConversation: Resolver<unknown, { conversationId: string }> = (
  _parent,
  args,
  ctx,
) => ctx.services.conversations.invitations.leave(requireActor(ctx), args.conversationId);
