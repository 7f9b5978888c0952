import type { GraphQLResolveInfo } from 'graphql';

import type { AccountView } from '../../../services/accounts/index.js';
import type { GraphqlContext } from '../../context.js';
import { loader } from '../../loaders.js';

const users = (ctx: GraphqlContext, info: GraphQLResolveInfo) =>
  loader<AccountView>(ctx, info, 'user', async (ids) => {
    const rows = await ctx.services.messages.reading.accountsByIds(ids);
    return new Map(rows.map((r) => [r.id, r]));
  });

/** A user by id, batched per page; undefined for a purged account. */
export const loadUser = (ctx: GraphqlContext, info: GraphQLResolveInfo, id: string) =>
  users(ctx, info).load(id);

/**
 * A user by id as a field answers it (null for a purged account): at once when a resolver above
 * already loaded it (`primeUsers`), so graphql-js completes the object without a promise;
 * otherwise batched per page as `loadUser`.
 */
export function userField(
  ctx: GraphqlContext,
  info: GraphQLResolveInfo,
  id: string,
): AccountView | null | Promise<AccountView | null> {
  const l = users(ctx, info);
  return l.known(id) ? (l.value(id) ?? null) : l.load(id).then((u) => u ?? null);
}

/** Loads the users `ids` in one batch, for the fields below to answer at once (`userField`). */
export const primeUsers = (ctx: GraphqlContext, info: GraphQLResolveInfo, ids: string[]) =>
  users(ctx, info).prime(ids);
