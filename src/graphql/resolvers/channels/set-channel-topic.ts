import { requireActor } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

export const setChannelTopic: Resolver<
  unknown,
  { conversationId: string; topic?: string | null }
> = (_parent, { conversationId, topic }, ctx) =>
  ctx.services.channels.setTopic(requireActor(ctx), conversationId, topic);
