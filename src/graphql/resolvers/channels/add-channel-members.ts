import { requireActor } from '../../context.js';
import type { MutationResolvers } from '../../generated/resolver-types.js';

export const addChannelMembers: MutationResolvers['addChannelMembers'] = (
  _parent,
  { conversationId, userIds },
  ctx,
) => ctx.services.channels.addMembers(requireActor(ctx), conversationId, userIds);
