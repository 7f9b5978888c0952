import type { Executor } from '../../db/database.js';
import { keysetQuery, type KeysetPage } from '../paging/index.js';

/** Blocks in force at `now`, newest first: every one, or one keyset page when `page` is given. */
export async function listIpBlocks(db: Executor, now: number, page?: KeysetPage) {
  const q = db
    .selectFrom('ip_block')
    .selectAll()
    .where((eb) => eb.or([eb('expiresAt', 'is', null), eb('expiresAt', '>', now)]));
  if (page) return keysetQuery(q, { at: 'createdAt', key: 'cidr' }, 'desc', page).execute();
  return q.orderBy('createdAt', 'desc').orderBy('cidr', 'desc').execute();
}

export async function findIpBlock(db: Executor, cidr: string) {
  return db.selectFrom('ip_block').selectAll().where('cidr', '=', cidr).executeTakeFirst();
}

export async function upsertIpBlock(
  db: Executor,
  row: {
    cidr: string;
    reason: string | null;
    createdAt: number;
    expiresAt: number | null;
    createdBy: string;
  },
) {
  await db
    .insertInto('ip_block')
    .values(row)
    .onConflict((oc) =>
      oc.column('cidr').doUpdateSet({
        reason: row.reason,
        createdAt: row.createdAt,
        expiresAt: row.expiresAt,
        createdBy: row.createdBy,
      }),
    )
    .execute();
}

export async function deleteIpBlock(db: Executor, cidr: string): Promise<boolean> {
  const result = await db.deleteFrom('ip_block').where('cidr', '=', cidr).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

export async function deleteExpiredIpBlocks(db: Executor, now: number): Promise<number> {
  const result = await db
    .deleteFrom('ip_block')
    .where('expiresAt', 'is not', null)
    .where('expiresAt', '<=', now)
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
