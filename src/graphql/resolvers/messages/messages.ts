import { requireActor } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

export const messages: Resolver<
  unknown,
  { conversationId: string; before?: string | null; after?: string | null; limit?: number | null }
> = (_parent, args, ctx) =>
  ctx.app.services.messages.page(requireActor(ctx), args.conversationId, args);
