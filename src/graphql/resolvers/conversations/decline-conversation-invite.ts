import { requireActor } from '../../context.js';
import type { MutationResolvers } from '../../generated/resolver-types.js';

export const declineConversationInvite: MutationResolvers['declineConversationInvite'] = (
  _parent,
  args,
  ctx,
) =>
  ctx.services.conversations.invitations.declineInvite(
    requireActor(ctx),
    args.serverId,
    args.conversationId,
  );
