import { sql, type RawBuilder } from 'kysely';

import type { Executor } from '../../db/database.js';
import { forbidden } from '../../errors.js';

import { principalIdsOfAccount } from './principal-id.js';

/**
 * SQL condition over a joined `account` row (or the given alias): true when no principal block
 * covers it (its `user:`, `key:`, `server:` or `remote:` id). Session resolution and the
 * WebSocket recheck use it, so a blocked account's sessions are dead wherever they are read,
 * even before (or without) the block's own session ending reaching them.
 */
export function accountNotBlocked(alias = 'account'): RawBuilder<boolean> {
  const col = (name: string) => sql.ref(`${alias}.${name}`);
  return sql<boolean>`not exists (select 1 from principal_block where ${sql.ref(
    'principal_block.principalId',
  )} in ('user:' || ${col('id')}, 'key:' || ${col('keyIdentityId')}, 'server:' || lower(${col(
    'homeServer',
  )}), 'remote:' || ${col('usernameKey')} || '@' || lower(${col('homeServer')}), case when ${col(
    'homeServer',
  )} is null then null else 'remote:' || ${col('usernameKey')} end))`;
}

/** The blocks among these principal ids (empty when none is blocked). */
export async function findBlocks(db: Executor, principalIds: string[]) {
  if (principalIds.length === 0) return [];
  return db
    .selectFrom('principal_block')
    .selectAll()
    .where('principalId', 'in', principalIds)
    .execute();
}

/** Whether a principal block covers the account (a missing account counts as not blocked). */
export async function isAccountBlocked(db: Executor, accountId: string): Promise<boolean> {
  const account = await db
    .selectFrom('account')
    .select(['id', 'keyIdentityId', 'homeServer', 'usernameKey'])
    .where('id', '=', accountId)
    .executeTakeFirst();
  if (!account) return false;
  return (await findBlocks(db, principalIdsOfAccount(account))).length > 0;
}

/**
 * The refusal every sign-in and signup of a blocked principal gets. SessionService.start checks
 * the blocks inside the session's insert, so every way of starting a session (password, device
 * key, signups) passes through it.
 */
export const blockedRefusal = () =>
  forbidden('this account is blocked on this server; contact the operator');
