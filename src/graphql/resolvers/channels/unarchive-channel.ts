import { requireActor } from '../../context.js';
import type { MutationResolvers } from '../../generated/resolver-types.js';

export const unarchiveChannel: MutationResolvers['unarchiveChannel'] = (
  _parent,
  { conversationId },
  ctx,
) => ctx.services.channels.unarchive(requireActor(ctx), conversationId);
