import { requireActor } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

export const mlsWelcomes: Resolver<
  unknown,
  {
    conversationId?: string | null;
    after?: string | null;
    before?: string | null;
    limit?: number | null;
  }
> = (_p, args, ctx) => ctx.services.mls.groups.welcomes(requireActor(ctx), args);
