import { requireActor } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

export const createConversation: Resolver<
  unknown,
  { input: { memberIds: string[]; name?: string | null; encrypted?: boolean | null } }
> = (_parent, args, ctx) =>
  ctx.services.conversations.creation.create(requireActor(ctx), args.input);
