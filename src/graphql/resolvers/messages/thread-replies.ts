import { requireActor } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

export const threadReplies: Resolver<
  unknown,
  { messageId: string; before?: string | null; after?: string | null; limit?: number | null }
> = (_parent, args, ctx) =>
  ctx.app.services.messages.threadPage(requireActor(ctx), args.messageId, args);
