import { requireActor } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

export const unpinMessage: Resolver<unknown, { messageId: string }> = (_parent, args, ctx) =>
  ctx.services.messages.reactions.unpin(requireActor(ctx), args.messageId);
