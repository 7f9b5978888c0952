import { requireActor } from '../../context.js';
import type { MutationResolvers } from '../../generated/resolver-types.js';

export const startTyping: MutationResolvers['startTyping'] = (_parent, { conversationId }, ctx) =>
  ctx.services.typing.startTyping(requireActor(ctx), conversationId);
