import { requireActor } from '../../context.js';
import type { MutationResolvers } from '../../generated/resolver-types.js';

export const createConversation: MutationResolvers['createConversation'] = (_parent, args, ctx) =>
  ctx.services.conversations.creation.create(requireActor(ctx), args.input);
