import { requireActor } from '../../context.js';
import type { MutationResolvers } from '../../generated/resolver-types.js';

export const renameChannel: MutationResolvers['renameChannel'] = (
  _parent,
  { conversationId, name },
  ctx,
) => ctx.services.channels.rename(requireActor(ctx), conversationId, name);
