import { requireActor } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

import { withAuthors } from './authors.js';

export const messages: Resolver<
  unknown,
  { conversationId: string; before?: string | null; after?: string | null; limit?: number | null }
> = async (_parent, args, ctx, info) => {
  const page = await ctx.services.messages.reading.page(
    requireActor(ctx),
    args.conversationId,
    args,
  );
  return withAuthors(ctx, info, ['items', 'author'], page.items, page);
};
