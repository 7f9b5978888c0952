import { sql, type Expression } from 'kysely';

import { batchedOnRoot, BatchedReads, keysTable } from '../../db/statements/batched-reads.js';
import type { Executor, Tx } from '../../db/database.js';
import { everyColumn, prefixed } from '../../db/statements/columns.js';
import { preparedQuery } from '../../db/statements/prepared.js';
import type { ConversationMemberTable, ConversationTable } from '../../db/tables/conversations.js';
import { DAY_MS } from '../../lib/clock.js';
import { pastCursor } from '../paging/index.js';

/** An invitation to an encrypted conversation lapses after 30 days (contract constant). */
export const INVITE_TTL_MS = 30 * DAY_MS;

/**
 * Whether another member of conversation `c` (the outer query's alias) blocked `accountId` or
 * was blocked by them. Both the access check and the inbox ask it.
 */
function blockedPartnerExists(accountId: string | Expression<string>) {
  const ref = sql.ref;
  const other = ref('o.accountId');
  return sql<boolean>`exists (
    select 1 from conversation_member as o
    inner join user_block as b on (
      (${ref('b.blockerId')} = ${accountId} and ${ref('b.blockedId')} = ${other})
      or (${ref('b.blockedId')} = ${accountId} and ${ref('b.blockerId')} = ${other})
    )
    where ${ref('o.conversationId')} = ${ref('c.id')} and ${other} <> ${accountId}
  )`;
}

/** Every column of `conversation`, listed (prepared statements never take `*`). */
const CONVERSATION_COLUMNS = everyColumn<ConversationTable>()([
  'id',
  'workspaceId',
  'kind',
  'name',
  'topic',
  'isPrivate',
  'encrypted',
  'archivedAt',
  'createdBy',
  'createdAt',
  'lastActivityAt',
]);

/**
 * A conversation as one caller sees it: the row, the caller's membership in it (state, read
 * marker) and in its workspace (role, timeout), and whether a block stands between the caller
 * and the other person of a DIRECT conversation. One query: every write and read starts here.
 * The ids are values, or the columns of a batch's keys (below).
 */
export function conversationAccess(
  db: Executor,
  conversationId: Expression<string>,
  accountId: Expression<string>,
) {
  return db
    .selectFrom('conversation as c')
    .leftJoin('conversation_member as cm', (j) =>
      j.onRef('cm.conversationId', '=', 'c.id').on('cm.accountId', '=', accountId),
    )
    .leftJoin('workspace_member as wm', (j) =>
      j.onRef('wm.workspaceId', '=', 'c.workspaceId').on('wm.accountId', '=', accountId),
    )
    .select(prefixed('c', CONVERSATION_COLUMNS))
    .select([
      'cm.state as memberState',
      'cm.joinedAt as memberJoinedAt',
      'cm.lastReadAt',
      'cm.lastReadMessageId',
      'wm.role',
      'wm.timedOutUntil',
    ])
    .select(
      sql<boolean>`${sql.ref('c.kind')} = 'direct' and ${blockedPartnerExists(accountId)}`.as(
        'blocked',
      ),
    )
    .where('c.id', '=', conversationId);
}

/** The columns of an access row, as `conversationAccess` names them; all, or no compiling. */
export const ACCESS_COLUMNS = everyColumn<ConversationAccessRow>()([
  ...CONVERSATION_COLUMNS,
  'memberState',
  'memberJoinedAt',
  'lastReadAt',
  'lastReadMessageId',
  'role',
  'timedOutUntil',
  'blocked',
]);

const conversationAccessQuery = preparedQuery(2, (db, conversationId: string, accountId: string) =>
  conversationAccess(db, sql.val(conversationId), sql.val(accountId)),
);

/**
 * PostgreSQL only (array parameters): the access of several (conversation, caller) pairs, each
 * looked up by its keys as the single read is: the read joined `lateral` to the keys, not the
 * tables joined to them, which a planner with lagging statistics may scan whole
 * (test/foundation/batched-read-plans.test.ts).
 */
const conversationAccessesQuery = preparedQuery(
  2,
  (db, conversationIds: string[], accountIds: string[]) =>
    db
      .selectFrom(keysTable({ cid: conversationIds, aid: accountIds }))
      .innerJoinLateral(conversationAccess(db, sql.ref('k.cid'), sql.ref('k.aid')).as('x'), (j) =>
        j.onTrue(),
      )
      .select([...prefixed('x', ACCESS_COLUMNS), 'k.aid as batchAccountId']),
);

/** The same read made earlier in the request, handed over once (prefetched-access.ts). */
export interface EarlyAccess {
  take(
    conversationId: string,
    accountId: string,
  ): { row: ConversationAccessRow | undefined } | null;
}

/**
 * The caller's access to a conversation, or undefined when it does not exist. `prefetched`: the
 * same read made with the request's session (prefetched-access.ts), used by the request's first
 * check of that conversation instead of a statement of its own.
 */
export async function findConversationAccess(
  db: Executor,
  conversationId: string,
  accountId: string,
  prefetched?: EarlyAccess,
): Promise<ConversationAccessRow | undefined> {
  const early = prefetched?.take(conversationId, accountId);
  if (early) return early.row;
  const batch = batchedOnRoot(db, 'conversation-access', () => accessReads(db));
  if (batch) return batch.get({ conversationId, accountId });
  return (await conversationAccessQuery(db, conversationId, accountId)).rows[0];
}

function accessReads(db: Executor) {
  return new BatchedReads(
    async (keys: Array<{ conversationId: string; accountId: string }>) => {
      const { rows } = await conversationAccessesQuery(
        db,
        keys.map((k) => k.conversationId),
        keys.map((k) => k.accountId),
      );
      return new Map(
        rows.map(({ batchAccountId, ...row }) => [`${row.id} ${batchAccountId}`, row]),
      );
    },
    (k) => `${k.conversationId} ${k.accountId}`,
  );
}

export type ConversationAccessRow = NonNullable<
  Awaited<ReturnType<typeof conversationAccessQuery>>['rows'][number]
>;

export async function findConversation(db: Executor, id: string) {
  return db.selectFrom('conversation').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function findConversationsByIds(db: Executor, ids: readonly string[]) {
  if (ids.length === 0) return [];
  return db.selectFrom('conversation').selectAll().where('id', 'in', ids).execute();
}

export async function insertConversation(db: Executor, row: ConversationTable) {
  await db.insertInto('conversation').values(row).execute();
}

export async function insertMembers(db: Executor, rows: ConversationMemberTable[]) {
  if (rows.length === 0) return;
  await db.insertInto('conversation_member').values(rows).execute();
}

/** Claims the pair key of a DIRECT conversation; false when the two already have one. */
export async function claimDirectPair(db: Executor, pairKey: string, conversationId: string) {
  const res = await db
    .insertInto('direct_pair')
    .values({ pairKey, conversationId })
    .onConflict((oc) => oc.column('pairKey').doNothing())
    .executeTakeFirst();
  return Number(res.numInsertedOrUpdatedRows ?? 0n) === 1;
}

export async function findDirectPair(db: Executor, pairKey: string) {
  return db
    .selectFrom('direct_pair')
    .select('conversationId')
    .where('pairKey', '=', pairKey)
    .executeTakeFirst();
}

/** Membership rows (members and live invitations) of some conversations. */
export async function membersOf(db: Executor, conversationIds: readonly string[], now: number) {
  if (conversationIds.length === 0) return [];
  return db
    .selectFrom('conversation_member')
    .select(['conversationId', 'accountId', 'state', 'joinedAt'])
    .where('conversationId', 'in', conversationIds)
    .where((eb) => eb.or([eb('state', '=', 'member'), eb('joinedAt', '>', now - INVITE_TTL_MS)]))
    .orderBy('joinedAt')
    .orderBy('accountId')
    .execute();
}

/** How many live invitations each account holds (for SVC_LIMIT_PENDING_INVITES_PER_USER). */
export async function countPendingInvites(
  db: Executor,
  accountIds: readonly string[],
  now: number,
) {
  if (accountIds.length === 0) return new Map<string, number>();
  const rows = await db
    .selectFrom('conversation_member')
    .select(['accountId', (eb) => eb.fn.countAll<number>().as('n')])
    .where('accountId', 'in', accountIds)
    .where('state', '=', 'pending')
    .where('joinedAt', '>', now - INVITE_TTL_MS)
    .groupBy('accountId')
    .execute();
  return new Map(rows.map((r) => [r.accountId, Number(r.n)]));
}

export async function setMemberState(
  db: Executor,
  conversationId: string,
  accountId: string,
  state: 'member' | 'pending',
  joinedAt: number,
) {
  const res = await db
    .updateTable('conversation_member')
    .set({ state, joinedAt, lastReadAt: null, lastReadMessageId: null })
    .where('conversationId', '=', conversationId)
    .where('accountId', '=', accountId)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) === 1;
}

export async function deleteMember(db: Executor, conversationId: string, accountId: string) {
  const res = await db
    .deleteFrom('conversation_member')
    .where('conversationId', '=', conversationId)
    .where('accountId', '=', accountId)
    .executeTakeFirst();
  return Number(res.numDeletedRows) === 1;
}

/** Drops invitations older than 30 days (the periodic clean-up; reads ignore them already). */
export async function deleteExpiredInvites(db: Executor, now: number) {
  const res = await db
    .deleteFrom('conversation_member')
    .where('state', '=', 'pending')
    .where('joinedAt', '<=', now - INVITE_TTL_MS)
    .executeTakeFirst();
  return Number(res.numDeletedRows);
}

const touchConversationQuery = preparedQuery(2, (db, id: string, at: number) =>
  db
    .updateTable('conversation')
    .set({ lastActivityAt: at })
    .where('id', '=', id)
    .where('lastActivityAt', '<', at),
);

export async function touchConversation(db: Executor, id: string, at: number) {
  await touchConversationQuery(db, id, at);
}

/** `touchConversation` held for the transaction's one statement of writes (`tx.defer`). */
export function deferTouchConversation(tx: Tx, id: string, at: number) {
  return tx.defer(touchConversationQuery.statement(tx.db, id, at));
}

/**
 * One page of the caller's inbox: conversations they are a member of or hold a live invitation
 * to, newest activity first. A DIRECT conversation with someone either of them blocked is left
 * out. `before`/`after` are keyset positions over (lastActivityAt, id) in that order.
 */
export async function inboxPage(
  db: Executor,
  accountId: string,
  opts: {
    now: number;
    limit: number;
    after?: { at: number; id: string };
    before?: { at: number; id: string };
  },
) {
  let q = db
    .selectFrom('conversation_member as cm')
    .innerJoin('conversation as c', 'c.id', 'cm.conversationId')
    .selectAll('c')
    .where('cm.accountId', '=', accountId)
    .where((eb) =>
      eb.or([eb('cm.state', '=', 'member'), eb('cm.joinedAt', '>', opts.now - INVITE_TTL_MS)]),
    )
    // A DIRECT conversation with someone either of them blocked is left out.
    .where(
      sql<boolean>`not (${sql.ref('c.kind')} = 'direct' and ${blockedPartnerExists(accountId)})`,
    );
  const { after, before } = opts;
  if (after) {
    // Further down the list: older activity.
    q = q.where(pastCursor({ at: 'c.lastActivityAt', key: 'c.id' }, 'desc', after));
  }
  if (before) {
    q = q.where(pastCursor({ at: 'c.lastActivityAt', key: 'c.id' }, 'asc', before));
    const rows = await q
      .orderBy('c.lastActivityAt', 'asc')
      .orderBy('c.id', 'asc')
      .limit(opts.limit + 1)
      .execute();
    return { rows: rows.slice(0, opts.limit).reverse(), more: rows.length > opts.limit };
  }
  const rows = await q
    .orderBy('c.lastActivityAt', 'desc')
    .orderBy('c.id', 'desc')
    .limit(opts.limit + 1)
    .execute();
  return { rows: rows.slice(0, opts.limit), more: rows.length > opts.limit };
}

export { lastMessages, unreadCounts } from './inbox-reads.js';

/**
 * Moves a read marker forward to (at, id), never back, held for the transaction's one statement
 * of writes (`tx.defer`).
 */
export function deferAdvanceReadMarker(
  tx: Tx,
  conversationId: string,
  accountId: string,
  at: number,
  messageId: string,
) {
  return tx.defer(
    advanceReadMarkerQuery.statement(tx.db, conversationId, accountId, at, messageId),
  );
}

/**
 * The same move as a write returning a row when the marker moved, for
 * `publishIfChanged` (the event only when it moved, in one statement on PostgreSQL).
 */
export function advanceReadMarkerStatement(
  db: Executor,
  conversationId: string,
  accountId: string,
  at: number,
  messageId: string,
) {
  return advanceReadMarkerReturningQuery.statement(db, conversationId, accountId, at, messageId);
}

const advanceReadMarkerReturningQuery = preparedQuery(
  4,
  (db, conversationId: string, accountId: string, at: number, messageId: string) =>
    markerAdvance(db, conversationId, accountId, at, messageId).returning('accountId'),
);

const advanceReadMarkerQuery = preparedQuery(4, markerAdvance);

function markerAdvance(
  db: Executor,
  conversationId: string,
  accountId: string,
  at: number,
  messageId: string,
) {
  return db
    .updateTable('conversation_member')
    .set({ lastReadAt: at, lastReadMessageId: messageId })
    .where('conversationId', '=', conversationId)
    .where('accountId', '=', accountId)
    .where('state', '=', 'member')
    .where((eb) =>
      eb.or([
        eb('lastReadAt', 'is', null),
        eb('lastReadAt', '<', at),
        eb.and([eb('lastReadAt', '=', at), eb('lastReadMessageId', '<', messageId)]),
      ]),
    );
}

/** Accounts (not deleted) by id, for checking the people named in a create or add. */
export async function findAccounts(db: Executor, ids: readonly string[]) {
  if (ids.length === 0) return [];
  return db
    .selectFrom('account')
    .select(['id', 'username', 'homeServer', 'createdAt'])
    .where('id', 'in', ids)
    .where('deletedAt', 'is', null)
    .execute();
}

/** For a dialect-neutral boolean read back from `exists(...)`. */
export const truthy = (v: unknown) => v === true || v === 1 || v === '1' || v === 't';

/** Whether the member joined by accepting an invitation (see `acceptInvite`). */
export async function joinedByInvitation(db: Executor, conversationId: string, accountId: string) {
  const row = await db
    .selectFrom('conversation_member')
    .select('acceptedInviteAt')
    .where('conversationId', '=', conversationId)
    .where('accountId', '=', accountId)
    .executeTakeFirst();
  return row?.acceptedInviteAt !== null && row?.acceptedInviteAt !== undefined;
}

/** Of `others`, the accounts that share a workspace with `accountId`. */
export async function sharingAWorkspace(
  db: Executor,
  accountId: string,
  others: readonly string[],
): Promise<string[]> {
  if (others.length === 0) return [];
  const rows = await db
    .selectFrom('workspace_member as mine')
    .innerJoin('workspace_member as theirs', 'theirs.workspaceId', 'mine.workspaceId')
    .select('theirs.accountId')
    .distinct()
    .where('mine.accountId', '=', accountId)
    .where('theirs.accountId', 'in', others)
    .execute();
  return rows.map((r) => r.accountId);
}

/** Of `ids`, the accounts that share a workspace or a conversation with `viewerId`. */
export async function sharingWith(
  db: Executor,
  viewerId: string,
  ids: readonly string[],
): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const inWorkspaces = await sharingAWorkspace(db, viewerId, ids);
  const inConversations = await db
    .selectFrom('conversation_member as mine')
    .innerJoin('conversation_member as other', 'other.conversationId', 'mine.conversationId')
    .select('other.accountId')
    .distinct()
    .where('mine.accountId', '=', viewerId)
    .where('mine.state', '=', 'member')
    .where('other.state', '=', 'member')
    .where('other.accountId', 'in', ids)
    .execute();
  return new Set([...inWorkspaces, ...inConversations.map((r) => r.accountId)]);
}

// Read by the realtime workspace stream after membership events.

/**
 * Which of the accounts are in a conversation: its members, and its pending invitees with when
 * they were invited (the live streams judge them by the read rule).
 */
export async function membershipsAmong(
  db: Executor,
  conversationId: string,
  accountIds: readonly string[],
): Promise<Array<{ accountId: string; state: string; joinedAt: number }>> {
  if (accountIds.length === 0) return [];
  const rows = await db
    .selectFrom('conversation_member')
    .select(['accountId', 'state', 'joinedAt'])
    .where('conversationId', '=', conversationId)
    .where('accountId', 'in', accountIds)
    .execute();
  return rows.map((r) => ({
    accountId: r.accountId,
    state: r.state,
    joinedAt: Number(r.joinedAt),
  }));
}

/** Every conversation membership and invitation of an account (its purge). */
export async function deleteConversationMembershipsOf(db: Executor, accountId: string) {
  await db.deleteFrom('conversation_member').where('accountId', '=', accountId).execute();
}

/** The account's memberships of the conversations of one workspace (leaving it). */
export async function deleteMembershipsInWorkspace(
  db: Executor,
  workspaceId: string,
  accountId: string,
) {
  await db
    .deleteFrom('conversation_member')
    .where('accountId', '=', accountId)
    .where('conversationId', 'in', (eb) =>
      eb.selectFrom('conversation').select('id').where('workspaceId', '=', workspaceId),
    )
    .execute();
}

/** Drops the pending (lapsed) invitations of these accounts, before inviting them again. */
export async function deletePendingMembers(
  db: Executor,
  conversationId: string,
  accountIds: readonly string[],
): Promise<void> {
  if (accountIds.length === 0) return;
  await db
    .deleteFrom('conversation_member')
    .where('conversationId', '=', conversationId)
    .where('accountId', 'in', accountIds)
    .where('state', '=', 'pending')
    .execute();
}

/** Turns a pending invitation into membership; false when it was not pending any more. */
export async function acceptPendingMember(
  db: Executor,
  conversationId: string,
  accountId: string,
  now: number,
): Promise<boolean> {
  const res = await db
    .updateTable('conversation_member')
    .set({
      state: 'member',
      joinedAt: now,
      lastReadAt: null,
      lastReadMessageId: null,
      acceptedInviteAt: now,
    })
    .where('conversationId', '=', conversationId)
    .where('accountId', '=', accountId)
    .where('state', '=', 'pending')
    .executeTakeFirst();
  return Number(res.numUpdatedRows) === 1;
}

/**
 * Removes one person's row from a conversation; false when there was none. `only` narrows it to
 * a member (not an invitee), or to an invitation still live (unexpired) at `liveInviteAt`.
 */
export async function deleteConversationMember(
  db: Executor,
  conversationId: string,
  accountId: string,
  only?: 'member' | { liveInviteAt: number },
): Promise<boolean> {
  let q = db
    .deleteFrom('conversation_member')
    .where('conversationId', '=', conversationId)
    .where('accountId', '=', accountId);
  if (only === 'member') q = q.where('state', '=', 'member');
  else if (only) {
    q = q.where('state', '=', 'pending').where('joinedAt', '>', only.liveInviteAt - INVITE_TTL_MS);
  }
  const res = await q.executeTakeFirst();
  return Number(res.numDeletedRows) > 0;
}

/** Deletes a conversation row (its members and messages go with it). */
export async function deleteConversation(db: Executor, id: string): Promise<void> {
  await db.deleteFrom('conversation').where('id', '=', id).execute();
}
