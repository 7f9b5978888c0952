import type { Executor } from '../../db/database.js';
import type { NotificationSettingTable } from '../../db/tables/notifications.js';

import { chunks, feedBase, unread } from './queries.js';

// The mail digest's queries over the notifications area's tables (owner: services/notifications).

/**
 * Accounts with unread, unmailed notifications older than `before` whose digests are on (or who
 * never changed a setting) and who have an address; at most `limit`, oldest waiting first.
 */
export async function digestCandidates(
  db: Executor,
  before: number,
  lastDigestBefore: number,
  limit: number,
) {
  const rows = await db
    .selectFrom('notification as n')
    .innerJoin('conversation_member as cm', (j) =>
      j
        .onRef('cm.conversationId', '=', 'n.conversationId')
        .onRef('cm.accountId', '=', 'n.accountId'),
    )
    .innerJoin('message as m', 'm.id', 'n.messageId')
    .innerJoin('account as a', 'a.id', 'n.accountId')
    .leftJoin('notification_setting as s', 's.accountId', 'n.accountId')
    .select(['n.accountId', 'a.email', (eb) => eb.fn.min<number>('n.createdAt').as('oldest')])
    .where('cm.state', '=', 'member')
    .where('m.deletedAt', 'is', null)
    .where('n.mailedAt', 'is', null)
    .where('n.createdAt', '<=', before)
    .where(unread)
    .where('a.email', 'is not', null)
    .where((eb) => eb.or([eb('s.emailDigests', 'is', null), eb('s.emailDigests', '=', 1)]))
    .where((eb) =>
      eb.or([eb('s.lastDigestAt', 'is', null), eb('s.lastDigestAt', '<=', lastDigestBefore)]),
    )
    .groupBy(['n.accountId', 'a.email'])
    .orderBy('oldest')
    .limit(limit)
    .execute();
  return rows.map((r) => ({ accountId: r.accountId, email: r.email as string }));
}

/** The notifications a digest of one account carries, oldest first, with what to show. */
export async function digestItems(db: Executor, accountId: string, before: number, limit: number) {
  return feedBase(db, accountId)
    .innerJoin('conversation as c', 'c.id', 'n.conversationId')
    .innerJoin('workspace as w', 'w.id', 'n.workspaceId')
    .leftJoin('account as au', 'au.id', 'n.actorId')
    .select([
      'n.id',
      'n.kind',
      'n.createdAt',
      'n.conversationId',
      'c.kind as conversationKind',
      'c.name as conversationName',
      'c.encrypted',
      'w.name as workspaceName',
      'w.isDirect',
      'au.username as actorUsername',
      'm.text',
    ])
    .where('n.mailedAt', 'is', null)
    .where('n.createdAt', '<=', before)
    .where(unread)
    .orderBy('n.createdAt')
    .orderBy('n.id')
    .limit(limit)
    .execute();
}

/**
 * Takes the person's digest slot: true when no digest went out within the interval (so two
 * runs at once, on any number of processes, mail a person once).
 */
export async function claimDigest(
  db: Executor,
  defaults: NotificationSettingTable,
  now: number,
  intervalMs: number,
) {
  await db
    .insertInto('notification_setting')
    .values(defaults)
    .onConflict((oc) => oc.column('accountId').doNothing())
    .execute();
  const res = await db
    .updateTable('notification_setting')
    .set({ lastDigestAt: now })
    .where('accountId', '=', defaults.accountId)
    .where('emailDigests', '=', 1)
    .where((eb) =>
      eb.or([eb('lastDigestAt', 'is', null), eb('lastDigestAt', '<=', now - intervalMs)]),
    )
    .executeTakeFirst();
  return Number(res.numUpdatedRows) === 1;
}

/** Gives back a digest slot and its notifications after the mail could not be sent. */
export async function releaseDigest(
  db: Executor,
  accountId: string,
  previous: number | null,
  ids: readonly string[],
) {
  await db
    .updateTable('notification_setting')
    .set({ lastDigestAt: previous })
    .where('accountId', '=', accountId)
    .execute();
  await markMailed(db, accountId, ids, null);
}

/** Sets when the notifications `ids` were mailed (null: not yet). */
export async function markMailed(
  db: Executor,
  accountId: string,
  ids: readonly string[],
  at: number | null,
) {
  for (const part of chunks(ids)) {
    await db
      .updateTable('notification')
      .set({ mailedAt: at })
      .where('accountId', '=', accountId)
      .where('id', 'in', part)
      .execute();
  }
}

// ---- push subscriptions
