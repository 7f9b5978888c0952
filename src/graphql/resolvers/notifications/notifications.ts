import { requireActor } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

export const notifications: Resolver<
  unknown,
  {
    after?: string | null;
    before?: string | null;
    limit?: number | null;
    unreadOnly?: boolean | null;
    conversationId?: string | null;
  }
> = (_parent, args, ctx) => ctx.services.notifications.feed(requireActor(ctx), args);
