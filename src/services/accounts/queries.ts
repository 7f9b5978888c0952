import type { Executor } from '../../db/database.js';
import type { AccountTable } from '../../db/tables/foundation.js';

export async function insertAccount(db: Executor, row: AccountTable) {
  await db.insertInto('account').values(row).execute();
}

export async function findAccountById(db: Executor, id: string) {
  return db.selectFrom('account').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function findAccountByUsernameKey(db: Executor, usernameKey: string) {
  return db
    .selectFrom('account')
    .selectAll()
    .where('usernameKey', '=', usernameKey)
    .where('deletedAt', 'is', null)
    .executeTakeFirst();
}

export async function findAccountByEmailKey(db: Executor, emailKey: string) {
  return db.selectFrom('account').select('id').where('emailKey', '=', emailKey).executeTakeFirst();
}

export async function setOperator(db: Executor, id: string, isOperator: boolean) {
  await db
    .updateTable('account')
    .set({ isOperator: isOperator ? 1 : 0 })
    .where('id', '=', id)
    .execute();
}
