import { requireActor } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

export const archiveChannel: Resolver<unknown, { conversationId: string }> = (
  _parent,
  { conversationId },
  ctx,
) => ctx.services.channels.archive(requireActor(ctx), conversationId);
