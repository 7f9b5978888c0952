import { requireActor } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

export const pinMessage: Resolver<unknown, { messageId: string }> = (_parent, args, ctx) =>
  ctx.services.messages.reactions.pin(requireActor(ctx), args.messageId);
