import { requireActor } from '../../context.js';
import type { MutationResolvers } from '../../generated/resolver-types.js';

export const archiveChannel: MutationResolvers['archiveChannel'] = (
  _parent,
  { conversationId },
  ctx,
) => ctx.services.channels.archive(requireActor(ctx), conversationId);
