import { sql, type Expression, type SqlBool } from 'kysely';

import { batchedOnRoot, BatchedReads, keysTable } from '../../db/statements/batched-reads.js';
import type { Executor } from '../../db/database.js';
import { preparedQuery } from '../../db/statements/prepared.js';
import type {
  NotificationLevelValue,
  NotificationRuleTable,
  NotificationSettingTable,
  NotificationTable,
  WorkspaceNotificationPolicyTable,
} from '../../db/tables/notifications.js';
import type { CursorPosition } from '../../lib/cursor.js';
import { pastCursor } from '../paging/index.js';

// The notifications area's SQL (owner of notification_setting, notification_rule, notification,
// workspace_notification_policy and push_subscription). Reads of other areas' tables are joins.

const CHUNK = 500;

export function chunks<T>(items: readonly T[], size = CHUNK): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

// ---- settings and rules

export async function findSetting(db: Executor, accountId: string) {
  return db
    .selectFrom('notification_setting')
    .selectAll()
    .where('accountId', '=', accountId)
    .executeTakeFirst();
}

export async function settingsOf(db: Executor, accountIds: readonly string[]) {
  const out: NotificationSettingTable[] = [];
  for (const part of chunks(accountIds)) {
    out.push(
      ...(await db
        .selectFrom('notification_setting')
        .selectAll()
        .where('accountId', 'in', part)
        .execute()),
    );
  }
  return out;
}

export async function saveSetting(db: Executor, row: NotificationSettingTable) {
  const { accountId: _key, ...rest } = row;
  await db
    .insertInto('notification_setting')
    .values(row)
    .onConflict((oc) => oc.column('accountId').doUpdateSet(rest))
    .execute();
}

/** Marks a digest sent (or the account's digests stopped) without touching other settings. */
export async function updateDigestState(
  db: Executor,
  fields: Partial<Pick<NotificationSettingTable, 'emailDigests' | 'lastDigestAt'>>,
  defaults: NotificationSettingTable,
) {
  await db
    .insertInto('notification_setting')
    .values({ ...defaults, ...fields })
    .onConflict((oc) => oc.column('accountId').doUpdateSet(fields))
    .execute();
}

export async function rulesOfAccount(db: Executor, accountId: string) {
  return db
    .selectFrom('notification_rule')
    .selectAll()
    .where('accountId', '=', accountId)
    .orderBy('updatedAt', 'desc')
    .execute();
}

export async function rulesFor(
  db: Executor,
  accountIds: readonly string[],
  scopeIds: readonly string[],
) {
  const out: NotificationRuleTable[] = [];
  for (const part of chunks(accountIds)) {
    out.push(
      ...(await db
        .selectFrom('notification_rule')
        .selectAll()
        .where('scopeId', 'in', scopeIds)
        .where('accountId', 'in', part)
        .execute()),
    );
  }
  return out;
}

export async function saveRule(db: Executor, row: NotificationRuleTable) {
  const { scopeId: _scope, accountId: _account, ...rest } = row;
  await db
    .insertInto('notification_rule')
    .values(row)
    .onConflict((oc) => oc.columns(['scopeId', 'accountId']).doUpdateSet(rest))
    .execute();
}

export async function deleteRule(db: Executor, accountId: string, scopeId: string) {
  await db
    .deleteFrom('notification_rule')
    .where('scopeId', '=', scopeId)
    .where('accountId', '=', accountId)
    .execute();
}

type WantingMore = { accountId: string; level: NotificationLevelValue; keywords: string };

/**
 * Members of a conversation whose own level or a rule there (or on its workspace) says `all`, or
 * who have keywords: one statement, run for every message in a channel. A rule's row comes back
 * as level `all` without keywords. On PostgreSQL the reads of messages sent together go as one
 * statement (src/db/statements/batched-reads.ts).
 */
export async function membersWantingMore(
  db: Executor,
  conversationId: string,
  workspaceId: string,
): Promise<WantingMore[]> {
  const batch = batchedOnRoot(db, 'members-wanting-more', () => wantingMoreReads(db));
  if (batch) return (await batch.get({ conversationId, workspaceId })) ?? [];
  return (await membersWantingMoreQuery(db, conversationId, workspaceId)).rows;
}

function wantingMoreReads(db: Executor) {
  return new BatchedReads(
    async (keys: Array<{ conversationId: string; workspaceId: string }>) => {
      const { rows } = await membersWantingMoreBatchQuery(
        db,
        keys.map((k) => k.conversationId),
        keys.map((k) => k.workspaceId),
      );
      const byConversation = new Map<string, WantingMore[]>();
      for (const { batchConversationId, ...row } of rows) {
        const list = byConversation.get(batchConversationId) ?? [];
        list.push(row);
        byConversation.set(batchConversationId, list);
      }
      return byConversation;
    },
    (k) => k.conversationId,
  );
}

/**
 * Everyone who could want more than mentions anywhere (wanting-more.ts): the accounts whose own
 * setting says `all` or has keywords (the partial index of migration 0022), and the scopes of
 * the rules that say `all`.
 */
export async function wantingMoreEverywhere(
  db: Executor,
): Promise<{ accounts: string[]; scopes: string[] }> {
  const accounts = await db
    .selectFrom('notification_setting as s')
    .select('s.accountId')
    .where(sql<boolean>`("s"."level" = 'all' or "s"."keywords" <> '[]')`)
    .execute();
  const scopes = await db
    .selectFrom('notification_rule as r')
    .select('r.scopeId')
    .distinct()
    .where('r.level', '=', 'all')
    .execute();
  return { accounts: accounts.map((r) => r.accountId), scopes: scopes.map((r) => r.scopeId) };
}

/** Whether the account in `account` is a member (not an invitee) of the conversation: by key. */
const memberOf = (conversationId: Expression<string>, account: 's.accountId' | 'r.accountId') =>
  sql<boolean>`exists (select 1 from "conversation_member" as "cm" where "cm"."conversationId" = ${conversationId} and "cm"."accountId" = ${sql.ref(account)} and "cm"."state" = 'member')`;

/** The ids are values, or the columns of a batch's keys. */
function wantingMore(
  db: Executor,
  conversationId: Expression<string>,
  workspaceId: Expression<string>,
) {
  return (
    db
      // From the few who want more (a partial index of them, migration 0022; its condition
      // written out as literals so both databases see the index covers it), each checked for
      // membership by the member table's key: not every member of a large channel looked up.
      .selectFrom('notification_setting as s')
      .select(['s.accountId', 's.level', 's.keywords'])
      .where(sql<boolean>`("s"."level" = 'all' or "s"."keywords" <> '[]')`)
      .where(memberOf(conversationId, 's.accountId'))
      .unionAll(
        db
          .selectFrom('notification_rule as r')
          .select([
            'r.accountId',
            sql<NotificationLevelValue>`'all'`.as('level'),
            sql<string>`'[]'`.as('keywords'),
          ])
          .where((eb) =>
            eb.or([eb('r.scopeId', '=', conversationId), eb('r.scopeId', '=', workspaceId)]),
          )
          .where('r.level', '=', 'all')
          .where(memberOf(conversationId, 'r.accountId')),
      )
  );
}

const membersWantingMoreQuery = preparedQuery(
  2,
  (db, conversationId: string, workspaceId: string) =>
    wantingMore(db, sql.val(conversationId), sql.val(workspaceId)),
);

/** PostgreSQL only (array parameters): the read for several conversations, lateral to the keys. */
const membersWantingMoreBatchQuery = preparedQuery(
  2,
  (db, conversationIds: string[], workspaceIds: string[]) =>
    db
      .selectFrom(keysTable({ cid: conversationIds, wid: workspaceIds }))
      .innerJoinLateral(wantingMore(db, sql.ref('k.cid'), sql.ref('k.wid')).as('x'), (j) =>
        j.onTrue(),
      )
      .select(['k.cid as batchConversationId', 'x.accountId', 'x.level', 'x.keywords']),
);

// ---- the workspace policy

export async function findPolicy(db: Executor, workspaceId: string) {
  return db
    .selectFrom('workspace_notification_policy')
    .selectAll()
    .where('workspaceId', '=', workspaceId)
    .executeTakeFirst();
}

export async function savePolicy(db: Executor, row: WorkspaceNotificationPolicyTable) {
  await db
    .insertInto('workspace_notification_policy')
    .values(row)
    .onConflict((oc) =>
      oc
        .column('workspaceId')
        .doUpdateSet({ channelMentions: row.channelMentions, updatedAt: row.updatedAt }),
    )
    .execute();
}

// ---- reads of other areas for the fan-out

export async function conversationOf(db: Executor, conversationId: string) {
  return db
    .selectFrom('conversation')
    .select(['id', 'workspaceId', 'kind', 'name', 'encrypted', 'isPrivate'])
    .where('id', '=', conversationId)
    .executeTakeFirst();
}

/** Every member (not invitee) of a conversation, in pages by account id. */
export async function memberPage(
  db: Executor,
  conversationId: string,
  afterAccountId: string | null,
  limit: number,
) {
  let q = db
    .selectFrom('conversation_member')
    .select('accountId')
    .where('conversationId', '=', conversationId)
    .where('state', '=', 'member');
  if (afterAccountId !== null) q = q.where('accountId', '>', afterAccountId);
  const rows = await q.orderBy('accountId').limit(limit).execute();
  return rows.map((r) => r.accountId);
}

/** Which of `accountIds` are members (not invitees) of the conversation. */
export async function membersOfAmong(
  db: Executor,
  conversationId: string,
  accountIds: readonly string[],
) {
  const out: string[] = [];
  for (const part of chunks(accountIds)) {
    const rows = await db
      .selectFrom('conversation_member')
      .select('accountId')
      .where('conversationId', '=', conversationId)
      .where('accountId', 'in', part)
      .where('state', '=', 'member')
      .execute();
    out.push(...rows.map((r) => r.accountId));
  }
  return out;
}

/** Authors in a thread (the root's included). */
export async function threadParticipants(db: Executor, rootId: string) {
  const rows = await db
    .selectFrom('message')
    .select('authorId')
    .distinct()
    .where((eb) => eb.or([eb('id', '=', rootId), eb('threadRootId', '=', rootId)]))
    .execute();
  return rows.map((r) => r.authorId);
}

/** Which of `accountIds` block `authorId`. */
export async function blockersOf(db: Executor, authorId: string, accountIds: readonly string[]) {
  const out = new Set<string>();
  for (const part of chunks(accountIds)) {
    const rows = await db
      .selectFrom('user_block')
      .select('blockerId')
      .where('blockedId', '=', authorId)
      .where('blockerId', 'in', part)
      .execute();
    for (const r of rows) out.add(r.blockerId);
  }
  return out;
}

// ---- the feed

export async function insertNotifications(db: Executor, rows: readonly NotificationTable[]) {
  for (const part of chunks(rows, 200)) {
    await db.insertInto('notification').values(part).execute();
  }
}

/**
 * Unread: not marked read, and (for a message of the conversation itself) after the member's
 * read marker, so reading the conversation reads its notifications too.
 */
export const unread = sql<SqlBool>`(n."readAt" is null and (n."threadRootId" is not null
  or cm."lastReadAt" is null or cm."lastReadAt" < n."createdAt"
  or (cm."lastReadAt" = n."createdAt" and cm."lastReadMessageId" < n."messageId")))`;

export type FeedRow = NotificationTable & { unread: boolean };

/**
 * Feed rows of an account: conversations they are a member of (not an invitee), messages not
 * deleted. Newest first, keyset over (createdAt, id).
 */
export function feedBase(db: Executor, accountId: string) {
  return db
    .selectFrom('notification as n')
    .innerJoin('conversation_member as cm', (j) =>
      j
        .onRef('cm.conversationId', '=', 'n.conversationId')
        .onRef('cm.accountId', '=', 'n.accountId'),
    )
    .innerJoin('message as m', 'm.id', 'n.messageId')
    .where('n.accountId', '=', accountId)
    .where('cm.state', '=', 'member')
    .where('m.deletedAt', 'is', null);
}

export async function feedPage(
  db: Executor,
  accountId: string,
  opts: {
    after?: CursorPosition;
    before?: CursorPosition;
    limit: number;
    unreadOnly: boolean;
    conversationId?: string;
  },
): Promise<{ rows: FeedRow[]; more: boolean }> {
  let q = feedBase(db, accountId)
    .selectAll('n')
    .select(sql<number>`case when ${unread} then 1 else 0 end`.as('isUnread'));
  if (opts.unreadOnly) q = q.where(unread);
  if (opts.conversationId) q = q.where('n.conversationId', '=', opts.conversationId);
  const { after, before } = opts;
  if (after) {
    q = q.where(pastCursor({ at: 'n.createdAt', key: 'n.id' }, 'desc', after));
  }
  if (before) {
    q = q.where(pastCursor({ at: 'n.createdAt', key: 'n.id' }, 'asc', before));
  }
  const dir = before ? 'asc' : 'desc';
  const raw = await q
    .orderBy('n.createdAt', dir)
    .orderBy('n.id', dir)
    .limit(opts.limit + 1)
    .execute();
  const more = raw.length > opts.limit;
  let rows = raw.slice(0, opts.limit).map(({ isUnread, ...n }) => ({
    ...n,
    createdAt: Number(n.createdAt),
    readAt: n.readAt === null ? null : Number(n.readAt),
    mailedAt: n.mailedAt === null ? null : Number(n.mailedAt),
    unread: Number(isUnread) === 1,
  }));
  if (before) rows = rows.reverse();
  return { rows, more };
}

/** Unread feed items per conversation (for `Conversation.mentionCount`). */
export async function unreadByConversation(
  db: Executor,
  accountId: string,
  conversationIds: readonly string[],
) {
  if (conversationIds.length === 0) return new Map<string, number>();
  const rows = await feedBase(db, accountId)
    .select(['n.conversationId', (eb) => eb.fn.countAll<number>().as('count')])
    .where('n.conversationId', 'in', conversationIds)
    .where(unread)
    .groupBy('n.conversationId')
    .execute();
  return new Map(rows.map((r) => [r.conversationId, Number(r.count)]));
}

export async function unreadTotal(db: Executor, accountId: string) {
  const row = await feedBase(db, accountId)
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .where(unread)
    .executeTakeFirst();
  return Number(row?.count ?? 0);
}

export async function findNotification(db: Executor, accountId: string, id: string) {
  return feedBase(db, accountId)
    .selectAll('n')
    .select(sql<number>`case when ${unread} then 1 else 0 end`.as('isUnread'))
    .where('n.id', '=', id)
    .executeTakeFirst();
}

export async function markRead(
  db: Executor,
  accountId: string,
  at: number,
  where: { id?: string; conversationId?: string },
) {
  let q = db
    .updateTable('notification')
    .set({ readAt: at })
    .where('accountId', '=', accountId)
    .where('readAt', 'is', null);
  if (where.id) q = q.where('id', '=', where.id);
  if (where.conversationId) q = q.where('conversationId', '=', where.conversationId);
  const res = await q.executeTakeFirst();
  return Number(res.numUpdatedRows);
}

// ---- the digest

/** Up to `limit` notifications older than `before` (retention); how many went. */
export async function deleteOlderThan(db: Executor, before: number, limit: number) {
  const ids = await db
    .selectFrom('notification')
    .select('id')
    .where('createdAt', '<', before)
    .limit(limit)
    .execute();
  if (ids.length === 0) return 0;
  await db
    .deleteFrom('notification')
    .where(
      'id',
      'in',
      ids.map((r) => r.id),
    )
    .execute();
  return ids.length;
}

/** A workspace's scoped rules, policy and notifications (its deletion hook). */
export async function deleteWorkspaceRows(db: Executor, workspaceId: string) {
  await db.deleteFrom('notification_rule').where('workspaceId', '=', workspaceId).execute();
  await db.deleteFrom('notification').where('workspaceId', '=', workspaceId).execute();
  await db
    .deleteFrom('workspace_notification_policy')
    .where('workspaceId', '=', workspaceId)
    .execute();
}

/** Everything of one account (its purge step). */
export async function deleteAccountRows(db: Executor, accountId: string) {
  await db.deleteFrom('notification').where('accountId', '=', accountId).execute();
  await db.deleteFrom('notification_rule').where('accountId', '=', accountId).execute();
  await db.deleteFrom('notification_setting').where('accountId', '=', accountId).execute();
  await db.deleteFrom('push_subscription').where('accountId', '=', accountId).execute();
}
