import { requireActor } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

export const leaveChannel: Resolver<unknown, { conversationId: string }> = (
  _parent,
  { conversationId },
  ctx,
) => ctx.services.channels.leave(requireActor(ctx), conversationId);
