import { everyColumn } from '../../db/statements/columns.js';
import type { Executor, Tx } from '../../db/database.js';
import { bulkInsert } from '../../db/statements/bulk-insert.js';
import { preparedQuery } from '../../db/statements/prepared.js';
import type { MessageEditTable, MessageTable } from '../../db/tables/messages.js';
import type { CursorPosition } from '../../lib/cursor.js';

// Message queries, executor first. Every list is a keyset scan of an index over (…, createdAt, id).

const MESSAGE_COLUMNS = everyColumn<MessageTable>()([
  'id',
  'conversationId',
  'workspaceId',
  'authorId',
  'text',
  'ciphertext',
  'threadRootId',
  'forwardedFromId',
  'createdAt',
  'editedAt',
  'deletedAt',
  'deletedBy',
  'replyCount',
  'lastReplyAt',
  'mentions',
]);

const insertMessageQuery = preparedQuery(MESSAGE_COLUMNS.length, (db, ...values: unknown[]) =>
  db
    .insertInto('message')
    .values(
      Object.fromEntries(MESSAGE_COLUMNS.map((c, i) => [c, values[i]])) as unknown as MessageTable,
    ),
);

/** Inserts one message (every send; prepared once). */
export async function insertMessage(db: Executor, row: MessageTable) {
  await insertMessageQuery(db, ...MESSAGE_COLUMNS.map((c) => row[c]));
}

/** The same insert, held for the transaction's one statement of writes (`tx.defer`). */
export function deferInsertMessage(tx: Tx, row: MessageTable) {
  return tx.defer(insertMessageQuery.statement(tx.db, ...MESSAGE_COLUMNS.map((c) => row[c])));
}

/** A message by id (prepared: marking read, reacting, editing each start with it). */
export async function findMessage(db: Executor, id: string): Promise<MessageTable | undefined> {
  return (await findMessageQuery(db, id)).rows[0];
}

const findMessageQuery = preparedQuery(1, (db, id: string) =>
  db.selectFrom('message').select(MESSAGE_COLUMNS).where('id', '=', id),
);

export async function findMessagesByIds(db: Executor, ids: readonly string[]) {
  if (ids.length === 0) return [];
  return db.selectFrom('message').selectAll().where('id', 'in', ids).execute();
}

/**
 * Counts a reply on its thread root. The root must be a message of the same conversation that
 * is not itself a reply; false otherwise (nothing changed).
 */
export async function bumpThreadRoot(
  db: Executor,
  rootId: string,
  conversationId: string,
  at: number,
) {
  const res = await db
    .updateTable('message')
    .set((eb) => ({ replyCount: eb('replyCount', '+', 1), lastReplyAt: at }))
    .where('id', '=', rootId)
    .where('conversationId', '=', conversationId)
    .where('threadRootId', 'is', null)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) === 1;
}

export interface PageQuery {
  conversationId: string;
  /** Null for the conversation's own messages, else the thread root's id. */
  threadRootId: string | null;
  before?: CursorPosition;
  after?: CursorPosition;
  /** Rows to read: the page size plus one, to learn whether there is more. */
  take: number;
}

/**
 * The statement of one message page: newest first without a cursor or with `before`, oldest
 * first with `after` (the newest page is a prepared query). A conversation's page walks `message_conversation_time_idx`
 * (conversationId, createdAt, id), a thread's `message_thread_time_idx`; the row comparison
 * `(createdAt, id) < (…)` is an index bound on both dialects. Exported for the EXPLAIN test.
 */
export function messagePageQuery(db: Executor, q: PageQuery) {
  if (q.threadRootId === null && !q.before && !q.after) {
    return newestPageQuery.statement(db, q.conversationId, q.take);
  }
  let query = db.selectFrom('message').select(MESSAGE_COLUMNS);
  query =
    q.threadRootId === null
      ? query.where('conversationId', '=', q.conversationId).where('threadRootId', 'is', null)
      : query.where('threadRootId', '=', q.threadRootId);
  if (q.before) {
    const { at, id } = q.before;
    query = query.where((eb) => eb(eb.refTuple('createdAt', 'id'), '<', eb.tuple(at, id)));
  }
  if (q.after) {
    const { at, id } = q.after;
    query = query.where((eb) => eb(eb.refTuple('createdAt', 'id'), '>', eb.tuple(at, id)));
  }
  const dir = q.after ? 'asc' : 'desc';
  return query.orderBy('createdAt', dir).orderBy('id', dir).limit(q.take).compile();
}

/**
 * The newest page of a conversation (the page every client opens on): prepared, columns listed,
 * so on PostgreSQL it is a named statement planned once per connection.
 */
const newestPageQuery = preparedQuery(2, (db, conversationId: string, take: number) =>
  db
    .selectFrom('message')
    .select(MESSAGE_COLUMNS)
    .where('conversationId', '=', conversationId)
    .where('threadRootId', 'is', null)
    .orderBy('createdAt', 'desc')
    .orderBy('id', 'desc')
    .limit(take),
);

/** Reactions of some messages grouped by emoji: count, whether `accountId` is among them. */
export async function reactionGroups(
  db: Executor,
  accountId: string,
  messageIds: readonly string[],
) {
  if (messageIds.length === 0) return [];
  return db
    .selectFrom('reaction')
    .select((eb) => [
      'messageId',
      'emoji',
      eb.fn.countAll<number>().as('count'),
      eb.fn.min('createdAt').as('firstAt'),
      eb.fn.max(eb.case().when('accountId', '=', accountId).then(1).else(0).end()).as('mine'),
    ])
    .where('messageId', 'in', messageIds)
    .groupBy(['messageId', 'emoji'])
    .orderBy('firstAt')
    .orderBy('emoji')
    .execute();
}

export async function addReaction(
  db: Executor,
  messageId: string,
  accountId: string,
  emoji: string,
  at: number,
) {
  const res = await db
    .insertInto('reaction')
    .values({ messageId, accountId, emoji, createdAt: at })
    .onConflict((oc) => oc.columns(['messageId', 'accountId', 'emoji']).doNothing())
    .executeTakeFirst();
  return Number(res.numInsertedOrUpdatedRows ?? 0n) === 1;
}

export async function countDistinctEmoji(db: Executor, messageId: string) {
  const row = await db
    .selectFrom('reaction')
    .select((eb) => eb.fn.count<number>('emoji').distinct().as('n'))
    .where('messageId', '=', messageId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function removeReaction(
  db: Executor,
  messageId: string,
  accountId: string,
  emoji: string,
) {
  const res = await db
    .deleteFrom('reaction')
    .where('messageId', '=', messageId)
    .where('accountId', '=', accountId)
    .where('emoji', '=', emoji)
    .executeTakeFirst();
  return Number(res.numDeletedRows) === 1;
}

export async function pinnedAmong(db: Executor, messageIds: readonly string[]) {
  if (messageIds.length === 0) return new Set<string>();
  const rows = await db
    .selectFrom('pin')
    .select('messageId')
    .where('messageId', 'in', messageIds)
    .execute();
  return new Set(rows.map((r) => r.messageId));
}

export async function countPins(db: Executor, conversationId: string) {
  const row = await db
    .selectFrom('pin')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('conversationId', '=', conversationId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function insertPin(
  db: Executor,
  conversationId: string,
  messageId: string,
  pinnedBy: string,
  at: number,
) {
  const res = await db
    .insertInto('pin')
    .values({ conversationId, messageId, pinnedBy, pinnedAt: at })
    .onConflict((oc) => oc.columns(['conversationId', 'messageId']).doNothing())
    .executeTakeFirst();
  return Number(res.numInsertedOrUpdatedRows ?? 0n) === 1;
}

export async function deletePin(db: Executor, conversationId: string, messageId: string) {
  const res = await db
    .deleteFrom('pin')
    .where('conversationId', '=', conversationId)
    .where('messageId', '=', messageId)
    .executeTakeFirst();
  return Number(res.numDeletedRows) === 1;
}

/** Pinned messages of a conversation, most recently pinned first. */
export async function pinnedMessages(db: Executor, conversationId: string, limit: number) {
  return db
    .selectFrom('pin')
    .innerJoin('message', 'message.id', 'pin.messageId')
    .selectAll('message')
    .where('pin.conversationId', '=', conversationId)
    .orderBy('pin.pinnedAt', 'desc')
    .orderBy('pin.messageId', 'desc')
    .limit(limit)
    .execute();
}

/** Edits of some messages, oldest first. */
export async function editsOf(db: Executor, messageIds: readonly string[]) {
  if (messageIds.length === 0) return [];
  return db
    .selectFrom('message_edit')
    .selectAll()
    .where('messageId', 'in', messageIds)
    .orderBy('editedAt')
    .orderBy('id')
    .execute();
}

/** Ids of live accounts by username key (for `@username` mentions). */
export async function accountIdsByUsernameKey(db: Executor, keys: readonly string[]) {
  if (keys.length === 0) return [];
  const rows = await db
    .selectFrom('account')
    .select('id')
    .where('usernameKey', 'in', keys)
    .where('deletedAt', 'is', null)
    .execute();
  return rows.map((r) => r.id);
}

/**
 * Ids of channels of a workspace named so that `accountId` can see: public ones (unless a
 * guest) and those they are a member of.
 */
export async function visibleChannelIdsByName(
  db: Executor,
  workspaceId: string,
  accountId: string,
  names: readonly string[],
  guest: boolean,
) {
  if (names.length === 0) return [];
  const rows = await db
    .selectFrom('conversation as c')
    .select('c.id')
    .where('c.workspaceId', '=', workspaceId)
    .where('c.kind', '=', 'channel')
    .where('c.name', 'in', names)
    .where((eb) => {
      const member = eb.exists(
        eb
          .selectFrom('conversation_member as cm')
          .select('cm.accountId')
          .whereRef('cm.conversationId', '=', 'c.id')
          .where('cm.accountId', '=', accountId)
          .where('cm.state', '=', 'member'),
      );
      return guest ? member : eb.or([eb('c.isPrivate', '=', 0), member]);
    })
    .execute();
  return rows.map((r) => r.id);
}

// ---- removal (removal.ts is the only caller) ------------------------------------------------

/** What a removed message's announcement and the removal hooks need. */
export interface RemovedMessage {
  id: string;
  conversationId: string;
  workspaceId: string;
  authorId: string;
  threadRootId: string | null;
}

/**
 * Clears the text, ciphertext and mentions of the messages not yet deleted and marks them
 * deleted; drops their edit history, reactions and pins. Returns the messages it changed: a
 * message deleted meanwhile is not among them (the update re-checks `deletedAt` under the row
 * lock on PostgreSQL).
 */
export async function tombstoneRows(
  db: Executor,
  ids: readonly string[],
  at: number,
  by: string,
): Promise<RemovedMessage[]> {
  if (ids.length === 0) return [];
  const removed = await db
    .updateTable('message')
    .set({ text: null, ciphertext: null, mentions: null, deletedAt: at, deletedBy: by })
    .where('id', 'in', ids)
    .where('deletedAt', 'is', null)
    .returning(['id', 'conversationId', 'workspaceId', 'authorId', 'threadRootId'])
    .execute();
  if (removed.length === 0) return removed;
  const changed = removed.map((m) => m.id);
  await db.deleteFrom('message_edit').where('messageId', 'in', changed).execute();
  await db.deleteFrom('reaction').where('messageId', 'in', changed).execute();
  await db.deleteFrom('pin').where('messageId', 'in', changed).execute();
  return removed;
}

/** Every plaintext message an account wrote, deleted or not (the purge's set). */
export async function plaintextIdsBy(db: Executor, accountId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('message')
    .select('id')
    .where('authorId', '=', accountId)
    .where('ciphertext', 'is', null)
    .execute();
  return rows.map((r) => r.id);
}

/**
 * Among the purged account's messages `ids`, the thread roots that keep a reply the purge does
 * not remove (someone else's, or the account's own encrypted one): they stay as deleted shells.
 */
export async function rootsWithRepliesOutside(
  db: Executor,
  ids: readonly string[],
  accountId: string,
): Promise<string[]> {
  if (ids.length === 0) return [];
  const rows = await db
    .selectFrom('message as r')
    .select('r.threadRootId')
    .distinct()
    .where('r.threadRootId', 'in', ids)
    .where((eb) => eb.or([eb('r.authorId', '!=', accountId), eb('r.ciphertext', 'is not', null)]))
    .execute();
  return rows.flatMap((r) => (r.threadRootId === null ? [] : [r.threadRootId]));
}

export async function deleteMessageRows(db: Executor, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  await db.deleteFrom('message').where('id', 'in', ids).execute();
}

/** Sets the reply count and last reply time of thread roots from the replies that remain. */
export async function recountThreads(db: Executor, rootIds: readonly string[]): Promise<void> {
  for (const rootId of rootIds) {
    const agg = await db
      .selectFrom('message')
      .select((eb) => [
        eb.fn.countAll<number | string>().as('n'),
        eb.fn.max('createdAt').as('last'),
      ])
      .where('threadRootId', '=', rootId)
      .executeTakeFirstOrThrow();
    await db
      .updateTable('message')
      .set({ replyCount: Number(agg.n), lastReplyAt: agg.last === null ? null : Number(agg.last) })
      .where('id', '=', rootId)
      .execute();
  }
}

/** The conversations removed messages belong to, with what their announcement needs. */
export async function conversationsByIds(db: Executor, ids: readonly string[]) {
  if (ids.length === 0) return [];
  return db
    .selectFrom('conversation')
    .select(['id', 'workspaceId', 'kind', 'isPrivate'])
    .where('id', 'in', ids)
    .execute();
}

/** Reactions some accounts added to anyone's messages. */
export async function deleteReactionsBy(db: Executor, accountIds: string[]): Promise<number> {
  if (accountIds.length === 0) return 0;
  const res = await db
    .deleteFrom('reaction')
    .where('accountId', 'in', accountIds)
    .executeTakeFirst();
  return Number(res.numDeletedRows);
}

/** One earlier text of a message, for its edit history. */
export async function insertEdit(db: Executor, row: MessageEditTable): Promise<void> {
  await db.insertInto('message_edit').values(row).execute();
}

/**
 * Replaces a live message's text, only while it still reads `previous`; false when a
 * concurrent edit or delete came first.
 */
export async function replaceText(
  db: Executor,
  messageId: string,
  previous: string,
  next: { text: string; editedAt: number; mentions: string },
): Promise<boolean> {
  const res = await db
    .updateTable('message')
    .set(next)
    .where('id', '=', messageId)
    .where('text', '=', previous)
    .where('deletedAt', 'is', null)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) === 1;
}

/** Rows per multi-row insert: well below either database's limit of bound parameters. */
const BULK_ROWS = 400;

/**
 * Inserts many messages in a few statements (an import's batch; `svc import`). The caller's
 * rows are whole: thread counts, mentions and times as they should be read.
 */
export async function insertMessages(db: Executor, rows: readonly MessageTable[]) {
  await bulkInsert(db, 'message', MESSAGE_COLUMNS, rows);
}

/** Inserts reactions in bulk, skipping any already there (an import's batch). */
export async function insertReactions(
  db: Executor,
  rows: ReadonlyArray<{ messageId: string; accountId: string; emoji: string; createdAt: number }>,
) {
  await bulkInsert(
    db,
    'reaction',
    ['messageId', 'accountId', 'emoji', 'createdAt'],
    rows,
    ' on conflict ("messageId", "accountId", "emoji") do nothing',
  );
}

/** Inserts pins in bulk, skipping any already there (an import's batch). */
export async function insertPins(
  db: Executor,
  rows: ReadonlyArray<{
    conversationId: string;
    messageId: string;
    pinnedBy: string;
    pinnedAt: number;
  }>,
) {
  for (let i = 0; i < rows.length; i += BULK_ROWS) {
    await db
      .insertInto('pin')
      .values(rows.slice(i, i + BULK_ROWS))
      .onConflict((oc) => oc.columns(['conversationId', 'messageId']).doNothing())
      .execute();
  }
}
