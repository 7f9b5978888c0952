import { requireActor } from '../../context.js';
import type { MutationResolvers } from '../../generated/resolver-types.js';

export const removeChannelMember: MutationResolvers['removeChannelMember'] = (
  _parent,
  { conversationId, userId },
  ctx,
) => ctx.services.channels.removeMember(requireActor(ctx), conversationId, userId);
