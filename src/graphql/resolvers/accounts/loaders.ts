import type { GraphQLResolveInfo } from 'graphql';

import type { AccountView } from '../../../services/accounts/account-service.js';
import type { GraphqlContext } from '../../context.js';
import { loader } from '../../loaders.js';

/** A user by id, batched per page; undefined for a purged account. */
export const loadUser = (ctx: GraphqlContext, info: GraphQLResolveInfo, id: string) =>
  loader<AccountView>(ctx, info, 'user', async (ids) => {
    const rows = await ctx.app.services.messages.accountsByIds(ids);
    return new Map(rows.map((r) => [r.id, r]));
  }).load(id);
