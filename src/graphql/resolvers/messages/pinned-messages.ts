import { requireActor } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

import { withAuthors } from './authors.js';

export const pinnedMessages: Resolver<unknown, { conversationId: string }> = async (
  _parent,
  args,
  ctx,
  info,
) => {
  const pinned = await ctx.services.messages.reading.pinned(requireActor(ctx), args.conversationId);
  return withAuthors(ctx, info, ['author'], pinned, pinned);
};
