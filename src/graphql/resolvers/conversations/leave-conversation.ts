import { requireActor } from '../../context.js';
import type { MutationResolvers } from '../../generated/resolver-types.js';

export const leaveConversation: MutationResolvers['leaveConversation'] = (_parent, args, ctx) =>
  ctx.services.conversations.invitations.leave(requireActor(ctx), args.conversationId);
