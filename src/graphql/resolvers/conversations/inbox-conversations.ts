import { requireActor } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

export const inboxConversations: Resolver<
  unknown,
  { after?: string | null; before?: string | null; limit?: number | null }
> = (_parent, args, ctx) => ctx.services.conversations.reading.inbox(requireActor(ctx), args);
