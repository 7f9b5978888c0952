import type { Executor } from '../../db/database.js';
import { preparedQuery } from '../../db/prepared.js';
import type { AccountTable } from '../../db/tables/foundation.js';

export async function insertAccount(db: Executor, row: AccountTable) {
  await db.insertInto('account').values(row).execute();
}

const accountByIdQuery = preparedQuery(1, (db, id: string) =>
  db.selectFrom('account').selectAll().where('id', '=', id),
);

export async function findAccountById(db: Executor, id: string) {
  return (await accountByIdQuery(db, id)).rows[0];
}

/** The live account holding a username key; with `includeDeleted`, a tombstone too. */
export async function findAccountByUsernameKey(
  db: Executor,
  usernameKey: string,
  opts: { includeDeleted?: boolean } = {},
) {
  // No stored key holds a NUL, and PostgreSQL refuses one in text: nobody has it.
  if (usernameKey.includes('\u0000')) return undefined;
  let q = db.selectFrom('account').selectAll().where('usernameKey', '=', usernameKey);
  if (!opts.includeDeleted) q = q.where('deletedAt', 'is', null);
  return q.executeTakeFirst();
}

export async function findAccountByEmailKey(db: Executor, emailKey: string) {
  if (emailKey.includes('\u0000')) return undefined;
  return db.selectFrom('account').select('id').where('emailKey', '=', emailKey).executeTakeFirst();
}

export async function setOperator(db: Executor, id: string, isOperator: boolean) {
  await db
    .updateTable('account')
    .set({ isOperator: isOperator ? 1 : 0 })
    .where('id', '=', id)
    .execute();
}

export async function setPasswordHash(db: Executor, id: string, passwordHash: string) {
  await db.updateTable('account').set({ passwordHash }).where('id', '=', id).execute();
}

export async function setDisplayName(db: Executor, id: string, displayName: string | null) {
  await db.updateTable('account').set({ displayName }).where('id', '=', id).execute();
}

/** The live account with an email key (for password reset), or undefined. */
export async function findLiveAccountByEmailKey(db: Executor, emailKey: string) {
  if (emailKey.includes('\u0000')) return undefined;
  return db
    .selectFrom('account')
    .selectAll()
    .where('emailKey', '=', emailKey)
    .where('deletedAt', 'is', null)
    .executeTakeFirst();
}
