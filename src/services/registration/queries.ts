import type { Executor } from '../../db/database.js';
import type { InstanceInviteTable } from '../../db/tables/registration.js';
import { keysetQuery, type KeysetPage } from '../paging/index.js';

export async function insertInstanceInvite(db: Executor, row: InstanceInviteTable) {
  await db.insertInto('instance_invite').values(row).execute();
}

export async function findInstanceInviteByTokenHash(db: Executor, tokenHash: string) {
  return db
    .selectFrom('instance_invite')
    .selectAll()
    .where('tokenHash', '=', tokenHash)
    .executeTakeFirst();
}

export async function findInstanceInviteById(db: Executor, id: string) {
  return db.selectFrom('instance_invite').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Instance invites, newest first: every one, or one keyset page when `page` is given. */
export async function listInstanceInvites(db: Executor, page?: KeysetPage) {
  const q = db.selectFrom('instance_invite').selectAll();
  if (page) return keysetQuery(q, { at: 'createdAt', key: 'id' }, 'desc', page).execute();
  return q.orderBy('createdAt', 'desc').orderBy('id', 'desc').execute();
}

/**
 * Spends one use of an invite unless it is used up or revoked; false when nothing was spent.
 * One conditional UPDATE, so two signups racing for the last use cannot both win.
 */
export async function spendInstanceInvite(db: Executor, id: string): Promise<boolean> {
  const result = await db
    .updateTable('instance_invite')
    .set((eb) => ({ uses: eb('uses', '+', 1) }))
    .where('id', '=', id)
    .where('revokedAt', 'is', null)
    .whereRef('uses', '<', 'maxUses')
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

export async function revokeInstanceInvite(db: Executor, id: string, now: number) {
  const result = await db
    .updateTable('instance_invite')
    .set({ revokedAt: now })
    .where('id', '=', id)
    .where('revokedAt', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Records a spent proof-of-work salt; false when it was spent before (a replay). */
export async function recordPowUse(
  db: Executor,
  row: { salt: string; usedAt: number; expiresAt: number },
): Promise<boolean> {
  await db.deleteFrom('registration_pow_use').where('expiresAt', '<', row.usedAt).execute();
  const result = await db
    .insertInto('registration_pow_use')
    .values(row)
    .onConflict((oc) => oc.column('salt').doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0n) === 1;
}

export async function emailKeyInUse(db: Executor, emailKey: string, exceptAccountId?: string) {
  let q = db.selectFrom('account').select('id').where('emailKey', '=', emailKey);
  if (exceptAccountId) q = q.where('id', '!=', exceptAccountId);
  return (await q.executeTakeFirst()) !== undefined;
}

/** Forgets spent proof-of-work challenges that expired before `now`; how many. */
export async function deleteExpiredPowUses(db: Executor, now: number): Promise<number> {
  const result = await db
    .deleteFrom('registration_pow_use')
    .where('expiresAt', '<', now)
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
