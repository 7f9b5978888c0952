import { requireActor } from '../../context.js';
import type { QueryResolvers } from '../../generated/resolver-types.js';

import { withAuthors } from './authors.js';

export const threadReplies: QueryResolvers['threadReplies'] = async (_parent, args, ctx, info) => {
  const page = await ctx.services.messages.reading.threadPage(
    requireActor(ctx),
    args.messageId,
    args,
  );
  return withAuthors(ctx, info, ['items', 'author'], page.items, page);
};
