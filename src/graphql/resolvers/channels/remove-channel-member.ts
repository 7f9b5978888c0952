import { requireActor } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

export const removeChannelMember: Resolver<unknown, { conversationId: string; userId: string }> = (
  _parent,
  { conversationId, userId },
  ctx,
) => ctx.services.channels.removeMember(requireActor(ctx), conversationId, userId);
