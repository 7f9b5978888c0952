import { requireActor } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

export const addChannelMembers: Resolver<unknown, { conversationId: string; userIds: string[] }> = (
  _parent,
  { conversationId, userIds },
  ctx,
) => ctx.services.channels.addMembers(requireActor(ctx), conversationId, userIds);
