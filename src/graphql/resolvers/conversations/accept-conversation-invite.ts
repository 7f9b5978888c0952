import { requireActor } from '../../context.js';
import type { MutationResolvers } from '../../generated/resolver-types.js';

export const acceptConversationInvite: MutationResolvers['acceptConversationInvite'] = (
  _parent,
  args,
  ctx,
) =>
  ctx.services.conversations.invitations.acceptInvite(
    requireActor(ctx),
    args.serverId,
    args.conversationId,
  );
