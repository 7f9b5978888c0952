import { requireActor } from '../../context.js';
import type { MutationResolvers } from '../../generated/resolver-types.js';

export const deleteMessage: MutationResolvers['deleteMessage'] = (_parent, args, ctx) =>
  ctx.services.messages.changes.delete(requireActor(ctx), args.messageId);
