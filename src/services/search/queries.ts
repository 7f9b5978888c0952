import { sql, type Expression, type ExpressionBuilder, type SqlBool } from 'kysely';

import type { Dialect, Executor, Tx } from '../../db/database.js';
import { preparedQuery } from '../../db/prepared.js';
import type { Database } from '../../db/schema.js';
import type { MessageTable } from '../../db/tables/collaboration.js';

import { indexTerms } from './tokenize.js';

// The message search index (docs/search.md). Rows hold a message's distinct terms joined by
// spaces; SQLite's FTS5 table follows them through triggers (migration 0011), PostgreSQL's GIN
// index through its expression. Every write here runs in the caller's transaction.

/** Rows per statement: below SQLite's bound-parameter limit with room to spare. */
const CHUNK = 500;

// The writes of every send and edit, built and compiled once (db/prepared.ts): building a
// Kysely query costs more than SQLite takes to run it.
const upsertTerms = preparedQuery(2, (db, messageId: string, terms: string) =>
  db
    .insertInto('message_search')
    .values({ messageId, terms })
    .onConflict((oc) =>
      oc.column('messageId').doUpdateSet((eb) => ({ terms: eb.ref('excluded.terms') })),
    ),
);
const deleteTerms = preparedQuery(1, (db, messageId: string) =>
  db.deleteFrom('message_search').where('messageId', '=', messageId),
);

/**
 * Indexes a message's text (a send, an edit) in the writing transaction: the row is replaced,
 * so an edited message is never found by its old words once the edit commits. Null text (an
 * encrypted or deleted message) or text without a term leaves no row.
 */
export async function writeMessageTerms(db: Executor, messageId: string, text: string | null) {
  const terms = text === null ? [] : indexTerms(text);
  if (terms.length === 0) {
    await deleteTerms(db, messageId);
    return;
  }
  await upsertTerms(db, messageId, terms.join(' '));
}

/** `writeMessageTerms` held for the transaction's one statement of writes (`tx.defer`). */
export function deferMessageTerms(tx: Tx, messageId: string, text: string | null) {
  const terms = text === null ? [] : indexTerms(text);
  return tx.defer(
    terms.length === 0
      ? deleteTerms.statement(tx.db, messageId)
      : upsertTerms.statement(tx.db, messageId, terms.join(' ')),
  );
}

/** Drops the terms of removed messages (the removal hook; docs/messages.md, "Removal"). */
export async function dropMessageTerms(db: Executor, messageIds: readonly string[]) {
  for (let i = 0; i < messageIds.length; i += CHUNK) {
    await db
      .deleteFrom('message_search')
      .where('messageId', 'in', messageIds.slice(i, i + CHUNK))
      .execute();
  }
}

/** One batch of messages to (re)index, oldest first after `after`, with what decides it. */
export async function messagesToIndex(
  db: Executor,
  dialect: Dialect,
  after: { at: number; id: string } | null,
  limit: number,
) {
  let q = db
    .selectFrom('message as m')
    .innerJoin('conversation as c', 'c.id', 'm.conversationId')
    .select(['m.id', 'm.createdAt', 'm.text', 'm.deletedAt', 'c.encrypted'])
    .orderBy('m.createdAt')
    .orderBy('m.id')
    .limit(limit);
  if (after) {
    q = q.where((eb) =>
      eb.or([
        eb('m.createdAt', '>', after.at),
        eb.and([eb('m.createdAt', '=', after.at), eb('m.id', '>', after.id)]),
      ]),
    );
  }
  // PostgreSQL: lock the batch's messages, so an edit committing meanwhile waits and then
  // writes its own terms last (SQLite runs one writer at a time already).
  if (dialect === 'postgres') q = q.forUpdate('m');
  return q.execute();
}

/**
 * Rewrites the index rows of one batch from the messages themselves: indexable ones get their
 * current terms, the others (deleted, encrypted, no text) none.
 */
export async function rewriteMessageTerms(
  db: Executor,
  rows: ReadonlyArray<Pick<MessageTable, 'id' | 'text' | 'deletedAt'> & { encrypted: number }>,
) {
  await dropMessageTerms(
    db,
    rows.map((r) => r.id),
  );
  const values = rows
    .filter((r) => r.deletedAt === null && Number(r.encrypted) === 0 && r.text !== null)
    .map((r) => ({ messageId: r.id, terms: indexTerms(r.text!).join(' ') }))
    .filter((v) => v.terms !== '');
  for (let i = 0; i < values.length; i += CHUNK) {
    await db
      .insertInto('message_search')
      .values(values.slice(i, i + CHUNK))
      .execute();
  }
}

/** Where the backfill of older messages stands; undefined once it is done (or never began). */
export async function findBackfill(db: Executor) {
  return db
    .selectFrom('search_backfill')
    .select(['afterAt', 'afterId'])
    .where('id', '=', 'messages')
    .executeTakeFirst();
}

/** Moves the backfill on to the last message of the batch just indexed. */
export async function saveBackfill(db: Executor, after: { at: number; id: string }) {
  await db
    .updateTable('search_backfill')
    .set({ afterAt: after.at, afterId: after.id })
    .where('id', '=', 'messages')
    .execute();
}

/** Ends the backfill: every message older than the index has been through it. */
export async function finishBackfill(db: Executor) {
  await db.deleteFrom('search_backfill').where('id', '=', 'messages').execute();
}

/** Quotes terms for FTS5's MATCH: each a one-token phrase; phrases side by side are an AND. */
function ftsQuery(terms: readonly string[]): string {
  return terms.map((t) => `"${t.replaceAll('"', '""')}"`).join(' ');
}

export interface MessageSearchFilters {
  workspaceId?: string | null;
  conversationId?: string | null;
  authorId?: string | null;
  /** Inclusive lower and exclusive upper bound on the send time (ms). */
  from?: number | null;
  to?: number | null;
  /** true: only thread replies; false: only messages of the conversation itself. */
  inThread?: boolean | null;
  /** true: only messages with a finalized attachment; false: only those without. */
  hasAttachment?: boolean | null;
}

/** A keyset position: results continue strictly before it, newest first. */
export type SearchPosition = { at: number; id: string };

/** The filters, and the keyset position, as one condition on `message as m`. */
function messageConditions(
  eb: ExpressionBuilder<Database & { m: MessageTable }, 'm'>,
  filters: MessageSearchFilters,
  before: SearchPosition | null,
) {
  const all: Array<Expression<SqlBool>> = [eb('m.deletedAt', 'is', null)];
  if (filters.workspaceId) all.push(eb('m.workspaceId', '=', filters.workspaceId));
  if (filters.conversationId) all.push(eb('m.conversationId', '=', filters.conversationId));
  if (filters.authorId) all.push(eb('m.authorId', '=', filters.authorId));
  if (filters.from !== null && filters.from !== undefined)
    all.push(eb('m.createdAt', '>=', filters.from));
  if (filters.to !== null && filters.to !== undefined) all.push(eb('m.createdAt', '<', filters.to));
  if (filters.inThread === true) all.push(eb('m.threadRootId', 'is not', null));
  if (filters.inThread === false) all.push(eb('m.threadRootId', 'is', null));
  if (typeof filters.hasAttachment === 'boolean') {
    // A message has an attachment when a finalized attachment row names it (docs/files.md);
    // attachment_message_idx answers it.
    const attached = eb.exists(
      eb
        .selectFrom('attachment as a')
        .select('a.id')
        .whereRef('a.messageId', '=', 'm.id')
        .where('a.finalizedAt', 'is not', null),
    );
    all.push(filters.hasAttachment ? attached : eb.not(attached));
  }
  if (before) {
    all.push(
      eb.or([
        eb('m.createdAt', '<', before.at),
        eb.and([eb('m.createdAt', '=', before.at), eb('m.id', '<', before.id)]),
      ]),
    );
  }
  return eb.and(all);
}

/**
 * Messages holding every term, that `accountId` may read (a member of a conversation that is
 * not encrypted, in a workspace they belong to for channels), not deleted, newest first after
 * the keyset `before`; `limit + 1` rows so the caller knows whether there are more. Every match
 * is read and sorted: cheap for a rare query (see `countMatches`), not for a common one.
 */
export async function searchMessageRows(
  db: Executor,
  dialect: Dialect,
  accountId: string,
  terms: readonly string[],
  filters: MessageSearchFilters,
  before: SearchPosition | null,
  limit: number,
) {
  const ref = sql.ref;
  const matches =
    dialect === 'sqlite'
      ? sql<boolean>`${ref('s.doc')} in (select rowid from message_search_fts
          where message_search_fts match ${ftsQuery(terms)})`
      : sql<boolean>`string_to_array(${ref('s.terms')}, ' ') @> ${sql.val([...terms])}::text[]`;
  return db
    .selectFrom('message_search as s')
    .innerJoin('message as m', 'm.id', 's.messageId')
    .innerJoin('conversation as c', 'c.id', 'm.conversationId')
    .innerJoin('conversation_member as cm', (j) =>
      j
        .onRef('cm.conversationId', '=', 'c.id')
        .on('cm.accountId', '=', accountId)
        .on('cm.state', '=', 'member'),
    )
    .leftJoin('workspace_member as wm', (j) =>
      j.onRef('wm.workspaceId', '=', 'c.workspaceId').on('wm.accountId', '=', accountId),
    )
    .selectAll('m')
    .where(matches)
    .where('c.encrypted', '=', 0)
    .where((eb) => eb.or([eb('c.kind', '<>', 'channel'), eb('wm.accountId', 'is not', null)]))
    .where((eb) => messageConditions(eb, filters, before))
    .orderBy('m.createdAt', 'desc')
    .orderBy('m.id', 'desc')
    .limit(limit + 1)
    .execute() as Promise<MessageTable[]>;
}

/**
 * How many messages hold every term, counted up to `cap` only. SQLite's FTS5 reads its doclists
 * no further than the cap; PostgreSQL's GIN builds the whole bitmap of the rarest term first, so
 * call it there only for words the planner does not hold to be common (`estimateMatches`). The
 * count covers every conversation, readable or not.
 */
export async function countMatches(
  db: Executor,
  dialect: Dialect,
  terms: readonly string[],
  cap: number,
): Promise<number> {
  const inner =
    dialect === 'sqlite'
      ? sql`select rowid from message_search_fts where message_search_fts match ${ftsQuery(terms)}
          limit ${cap}`
      : sql`select 1 from message_search
          where string_to_array(terms, ' ') @> ${sql.val([...terms])}::text[] limit ${cap}`;
  const res = await sql<{
    n: number | string;
  }>`select count(*) as n from (${inner}) as hits`.execute(db);
  return Number(res.rows[0]?.n ?? 0);
}

/**
 * The planner's estimate of how many messages hold every term (PostgreSQL only), from the GIN
 * index's element statistics: no index is read. A word too rare to be among the statistics'
 * most common elements is estimated at a floor of a fraction of a percent of the rows, so a low
 * estimate says little.
 */
export async function estimateMatches(db: Executor, terms: readonly string[]) {
  const res = await sql<{ 'QUERY PLAN': Array<{ Plan: { 'Plan Rows': number } }> }>`explain
    (format json) select 1 from message_search
    where string_to_array(terms, ' ') @> ${sql.val([...terms])}::text[]`.execute(db);
  return Number(res.rows[0]?.['QUERY PLAN'][0]?.Plan['Plan Rows'] ?? 0);
}

/**
 * The conversations `accountId` may search: a member of, not encrypted, and for a channel in a
 * workspace they belong to (the same rule as `searchMessageRows`' joins).
 */
export async function searchableConversationIds(db: Executor, accountId: string) {
  const rows = await db
    .selectFrom('conversation_member as cm')
    .innerJoin('conversation as c', 'c.id', 'cm.conversationId')
    .leftJoin('workspace_member as wm', (j) =>
      j.onRef('wm.workspaceId', '=', 'c.workspaceId').on('wm.accountId', '=', accountId),
    )
    .select('c.id')
    .where('cm.accountId', '=', accountId)
    .where('cm.state', '=', 'member')
    .where('c.encrypted', '=', 0)
    .where((eb) => eb.or([eb('c.kind', '<>', 'channel'), eb('wm.accountId', 'is not', null)]))
    .execute();
  return new Set(rows.map((r) => r.id));
}

/**
 * Indexed messages newest first after `before`, with their terms, whatever their words: the
 * candidates a search for a common query walks (by `message_time_idx`, or a conversation's
 * or author's index when the filters name one) and checks term by term.
 */
export async function messagesWithTerms(
  db: Executor,
  filters: MessageSearchFilters,
  before: SearchPosition | null,
  limit: number,
) {
  return db
    .selectFrom('message as m')
    .innerJoin('message_search as s', 's.messageId', 'm.id')
    .selectAll('m')
    .select('s.terms')
    .where((eb) => messageConditions(eb, filters, before))
    .orderBy('m.createdAt', 'desc')
    .orderBy('m.id', 'desc')
    .limit(limit)
    .execute() as Promise<Array<MessageTable & { terms: string }>>;
}
