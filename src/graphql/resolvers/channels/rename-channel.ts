import { requireActor } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

export const renameChannel: Resolver<unknown, { conversationId: string; name: string }> = (
  _parent,
  { conversationId, name },
  ctx,
) => ctx.services.channels.rename(requireActor(ctx), conversationId, name);
