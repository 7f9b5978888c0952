import { requireActor } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

export const sendMessage: Resolver<
  unknown,
  { input: { conversationId: string; text: string; threadRootId?: string | null } }
> = (_parent, args, ctx) => ctx.services.messages.send(requireActor(ctx), args.input);
