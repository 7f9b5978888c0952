import { requireActor } from '../../context.js';
import type { MutationResolvers } from '../../generated/resolver-types.js';

export const setChannelTopic: MutationResolvers['setChannelTopic'] = (
  _parent,
  { conversationId, topic },
  ctx,
) => ctx.services.channels.setTopic(requireActor(ctx), conversationId, topic);
