import { requireActor } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

export const addConversationMembers: Resolver<
  unknown,
  { input: { conversationId: string; memberIds: string[] } }
> = (_parent, args, ctx) =>
  ctx.services.conversations.creation.addMembers(requireActor(ctx), args.input);
