import { requireActor } from '../../context.js';
import type { MutationResolvers } from '../../generated/resolver-types.js';

export const leaveChannel: MutationResolvers['leaveChannel'] = (_parent, { conversationId }, ctx) =>
  ctx.services.channels.leave(requireActor(ctx), conversationId);
