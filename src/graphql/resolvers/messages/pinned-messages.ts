import { requireActor } from '../../context.js';
import type { QueryResolvers } from '../../generated/resolver-types.js';

import { withAuthors } from './authors.js';

export const pinnedMessages: QueryResolvers['pinnedMessages'] = async (
  _parent,
  args,
  ctx,
  info,
) => {
  const pinned = await ctx.services.messages.reading.pinned(requireActor(ctx), args.conversationId);
  return withAuthors(ctx, info, ['author'], pinned, pinned);
};
