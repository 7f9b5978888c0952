import { requireActor } from '../../context.js';
import type { MutationResolvers } from '../../generated/resolver-types.js';

export const joinChannel: MutationResolvers['joinChannel'] = (_parent, { conversationId }, ctx) =>
  ctx.services.channels.join(requireActor(ctx), conversationId);
