import { requireActor } from '../../context.js';
import type { MutationResolvers } from '../../generated/resolver-types.js';

export const addConversationMembers: MutationResolvers['addConversationMembers'] = (
  _parent,
  args,
  ctx,
) => ctx.services.conversations.creation.addMembers(requireActor(ctx), args.input);
