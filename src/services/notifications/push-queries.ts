import type { Executor } from '../../db/database.js';
import type { PushSubscriptionTable } from '../../db/tables/notifications.js';

import { chunks } from './queries.js';

// Web Push subscriptions (push_subscription; owner: services/notifications).

export async function savePushSubscription(db: Executor, row: PushSubscriptionTable) {
  await db
    .insertInto('push_subscription')
    .values(row)
    .onConflict((oc) =>
      oc.column('endpoint').doUpdateSet({
        accountId: row.accountId,
        p256dh: row.p256dh,
        auth: row.auth,
        createdAt: row.createdAt,
      }),
    )
    .execute();
}

export async function pushSubscriptionsOf(db: Executor, accountIds: readonly string[]) {
  const out: PushSubscriptionTable[] = [];
  for (const part of chunks(accountIds)) {
    out.push(
      ...(await db
        .selectFrom('push_subscription')
        .selectAll()
        .where('accountId', 'in', part)
        .execute()),
    );
  }
  return out;
}

export async function deletePushSubscription(
  db: Executor,
  where: { id?: string; endpoint?: string; accountId?: string },
) {
  let q = db.deleteFrom('push_subscription');
  if (where.id) q = q.where('id', '=', where.id);
  if (where.endpoint) q = q.where('endpoint', '=', where.endpoint);
  if (where.accountId) q = q.where('accountId', '=', where.accountId);
  const res = await q.executeTakeFirst();
  return Number(res.numDeletedRows);
}

export async function markPushed(db: Executor, id: string, at: number) {
  await db
    .updateTable('push_subscription')
    .set({ lastSuccessAt: at })
    .where('id', '=', id)
    .execute();
}

// ---- deletion
