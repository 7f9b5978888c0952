import { requireActor } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

export const unarchiveChannel: Resolver<unknown, { conversationId: string }> = (
  _parent,
  { conversationId },
  ctx,
) => ctx.services.channels.unarchive(requireActor(ctx), conversationId);
