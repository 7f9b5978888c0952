import { requireActor } from '../../context.js';
import type { MutationResolvers } from '../../generated/resolver-types.js';

export const forwardMessage: MutationResolvers['forwardMessage'] = (_parent, args, ctx) =>
  ctx.services.messages.sending.forward(requireActor(ctx), args.messageId, args.toConversationId);
