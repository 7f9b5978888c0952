import { requireActor } from '../../context.js';
import type { MutationResolvers } from '../../generated/resolver-types.js';

export const addReaction: MutationResolvers['addReaction'] = (_parent, args, ctx) =>
  ctx.services.messages.reactions.addReaction(requireActor(ctx), args.messageId, args.emoji);
