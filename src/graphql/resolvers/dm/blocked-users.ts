import { requireActor } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

export const blockedUsers: Resolver = async (_parent, _args, ctx) => {
  const ids = await ctx.services.dm.blockedIds(requireActor(ctx));
  const users = new Map((await ctx.services.messages.accountsByIds(ids)).map((u) => [u.id, u]));
  return ids.flatMap((id) => users.get(id) ?? []);
};
