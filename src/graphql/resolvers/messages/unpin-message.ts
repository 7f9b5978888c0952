import { requireActor } from '../../context.js';
import type { MutationResolvers } from '../../generated/resolver-types.js';

export const unpinMessage: MutationResolvers['unpinMessage'] = (_parent, args, ctx) =>
  ctx.services.messages.reactions.unpin(requireActor(ctx), args.messageId);
