import { requireActor } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

export const deleteMessage: Resolver<unknown, { messageId: string }> = (_parent, args, ctx) =>
  ctx.services.messages.changes.delete(requireActor(ctx), args.messageId);
