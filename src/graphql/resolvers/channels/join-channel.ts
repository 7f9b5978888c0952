import { requireActor } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

export const joinChannel: Resolver<unknown, { conversationId: string }> = (
  _parent,
  { conversationId },
  ctx,
) => ctx.services.channels.join(requireActor(ctx), conversationId);
