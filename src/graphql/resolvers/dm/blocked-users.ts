import { keyCursor } from '../../../services/paging/index.js';
import { requireActor } from '../../context.js';
import type { QueryResolvers } from '../../generated/resolver-types.js';
import type { UserParent } from '../accounts/user.js';

/** One page of the caller's block list; each user carries its place in it as `cursor`. */
export const blockedUsers: QueryResolvers['blockedUsers'] = async (_parent, args, ctx) => {
  const page = await ctx.services.dm.blocked(requireActor(ctx), args);
  const users = new Map(
    (await ctx.services.messages.reading.accountsByIds(page.map((b) => b.userId))).map((u) => [
      u.id,
      u,
    ]),
  );
  return page.flatMap((b): UserParent[] => {
    const user = users.get(b.userId);
    return user ? [{ ...user, listCursor: keyCursor(b.blockedAt, b.userId) }] : [];
  });
};
