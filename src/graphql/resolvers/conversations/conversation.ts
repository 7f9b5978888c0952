import { requireActor } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

export const conversation: Resolver<unknown, { id: string }> = (_parent, args, ctx) =>
  ctx.services.conversations.reading.get(requireActor(ctx), args.id);
