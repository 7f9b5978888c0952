import { requireActor } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

export const acceptConversationInvite: Resolver<
  unknown,
  { serverId: string; conversationId: string }
> = (_parent, args, ctx) =>
  ctx.services.conversations.invitations.acceptInvite(
    requireActor(ctx),
    args.serverId,
    args.conversationId,
  );
