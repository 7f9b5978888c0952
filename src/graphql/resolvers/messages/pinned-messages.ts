import { requireActor } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

export const pinnedMessages: Resolver<unknown, { conversationId: string }> = (_parent, args, ctx) =>
  ctx.app.services.messages.pinned(requireActor(ctx), args.conversationId);
