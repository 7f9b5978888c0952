import { requireActor } from '../../context.js';
import type { MutationResolvers } from '../../generated/resolver-types.js';

export const pinMessage: MutationResolvers['pinMessage'] = (_parent, args, ctx) =>
  ctx.services.messages.reactions.pin(requireActor(ctx), args.messageId);
