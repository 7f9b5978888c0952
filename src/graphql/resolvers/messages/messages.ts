import { requireActor } from '../../context.js';
import type { QueryResolvers } from '../../generated/resolver-types.js';

import { withAuthors } from './authors.js';

export const messages: QueryResolvers['messages'] = async (_parent, args, ctx, info) => {
  const page = await ctx.services.messages.reading.page(
    requireActor(ctx),
    args.conversationId,
    args,
  );
  return withAuthors(ctx, info, ['items', 'author'], page.items, page);
};
