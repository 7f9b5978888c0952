import { requireSession } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

export const declineConversationInvite: Resolver<
  unknown,
  { serverId: string; conversationId: string }
> = (_parent, args, ctx) =>
  ctx.app.services.conversations.declineInvite(
    requireSession(ctx).accountId,
    args.serverId,
    args.conversationId,
  );
