import type { Executor } from '../../db/database.js';
import { everyColumn } from '../../db/statements/columns.js';
import { preparedQuery } from '../../db/statements/prepared.js';
import type { AccountTable } from '../../db/tables/accounts.js';

export async function insertAccount(db: Executor, row: AccountTable) {
  await db.insertInto('account').values(row).execute();
}

/** Every column of `account`, listed (prepared statements never take `*`; src/db/statements/columns.ts). */
export const ACCOUNT_COLUMNS = everyColumn<AccountTable>()([
  'id',
  'username',
  'usernameKey',
  'displayName',
  'email',
  'emailKey',
  'passwordHash',
  'keyIdentityId',
  'homeServer',
  'isOperator',
  'avatarPath',
  'acceptedTermsUrl',
  'acceptedTermsAt',
  'createdAt',
  'deletionRequestedAt',
  'deletionScheduledFor',
  'deletedAt',
]);

const accountByIdQuery = preparedQuery(1, (db, id: string) =>
  db.selectFrom('account').select(ACCOUNT_COLUMNS).where('id', '=', id),
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

export async function scheduleDeletion(
  db: Executor,
  accountId: string,
  requestedAt: number,
  scheduledFor: number,
): Promise<boolean> {
  const res = await db
    .updateTable('account')
    .set({ deletionRequestedAt: requestedAt, deletionScheduledFor: scheduledFor })
    .where('id', '=', accountId)
    .where('deletionScheduledFor', 'is', null)
    .where('deletedAt', 'is', null)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) === 1;
}

export async function unscheduleDeletion(db: Executor, accountId: string): Promise<boolean> {
  const res = await db
    .updateTable('account')
    .set({ deletionRequestedAt: null, deletionScheduledFor: null })
    .where('id', '=', accountId)
    .where('deletionScheduledFor', 'is not', null)
    .where('deletedAt', 'is', null)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) === 1;
}

export async function writeTombstone(
  db: Executor,
  accountId: string,
  username: string,
  now: number,
) {
  await db
    .updateTable('account')
    .set({
      username,
      usernameKey: username.toLowerCase(),
      displayName: 'Deleted account',
      email: null,
      emailKey: null,
      passwordHash: null,
      avatarPath: null,
      isOperator: 0,
      deletedAt: now,
    })
    .where('id', '=', accountId)
    .execute();
}

export async function setAccountKeyIdentity(
  db: Executor,
  accountId: string,
  keyIdentityId: string,
  opts: { dropPassword: boolean },
) {
  await db
    .updateTable('account')
    .set(opts.dropPassword ? { keyIdentityId, passwordHash: null } : { keyIdentityId })
    .where('id', '=', accountId)
    .execute();
}

export async function setAccountEmail(
  db: Executor,
  accountId: string,
  email: { email: string; key: string },
) {
  await db
    .updateTable('account')
    .set({ email: email.email, emailKey: email.key })
    .where('id', '=', accountId)
    .execute();
}

export async function recordTermsAcceptance(
  db: Executor,
  accountId: string,
  url: string,
  at: number,
) {
  await db
    .updateTable('account')
    .set({ acceptedTermsUrl: url, acceptedTermsAt: at })
    .where('id', '=', accountId)
    .execute();
}

/** Same as lockWorkspace for an account: serialises per-person caps (owned workspaces, invites). */
export async function lockAccount(db: Executor, id: string): Promise<void> {
  await db
    .updateTable('account')
    .set((eb) => ({ createdAt: eb.ref('createdAt') }))
    .where('id', '=', id)
    .execute();
}

/** The account's password reset tokens (its purge). */
export async function deletePasswordResetsOf(db: Executor, accountId: string) {
  await db.deleteFrom('password_reset').where('accountId', '=', accountId).execute();
}

/** Sets (or clears) the path of an account's avatar image (`avatars/<sha256>.<ext>`). */
export async function setAvatarPath(db: Executor, id: string, avatarPath: string | null) {
  await db.updateTable('account').set({ avatarPath }).where('id', '=', id).execute();
}

/** Whether a live account shows this avatar path. */
export async function avatarPathInUse(db: Executor, avatarPath: string): Promise<boolean> {
  const row = await db
    .selectFrom('account')
    .select('id')
    .where('avatarPath', '=', avatarPath)
    .where('deletedAt', 'is', null)
    .executeTakeFirst();
  return row !== undefined;
}

/** Which of these avatar paths some account still holds (the blob sweep's reference source). */
export async function avatarPathsAmong(db: Executor, paths: readonly string[]): Promise<string[]> {
  if (paths.length === 0) return [];
  const rows = await db
    .selectFrom('account')
    .select('avatarPath')
    .where('avatarPath', 'in', paths)
    .execute();
  return rows.map((r) => r.avatarPath).filter((p): p is string => p !== null);
}

/** Accounts by id, with the fields of the User type. */
export async function accountViewsByIds(db: Executor, ids: readonly string[]) {
  if (ids.length === 0) return [];
  return db
    .selectFrom('account')
    .select([
      'id',
      'username',
      'displayName',
      'email',
      'createdAt',
      'isOperator',
      'deletionScheduledFor',
      'homeServer',
      'avatarPath',
      'deletedAt',
    ])
    .where('id', 'in', ids)
    .execute();
}
