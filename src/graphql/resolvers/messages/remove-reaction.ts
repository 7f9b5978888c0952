import { requireActor } from '../../context.js';
import type { MutationResolvers } from '../../generated/resolver-types.js';

export const removeReaction: MutationResolvers['removeReaction'] = (_parent, args, ctx) =>
  ctx.services.messages.reactions.removeReaction(requireActor(ctx), args.messageId, args.emoji);
