import { sql } from 'kysely';

import type { Dialect, Executor } from '../../db/database.js';
import type { MessageTable } from '../../db/tables/collaboration.js';

import { indexTerms } from './tokenize.js';

// The message search index (docs/search.md). Rows hold a message's distinct terms joined by
// spaces; SQLite's FTS5 table follows them through triggers (migration 0011), PostgreSQL's GIN
// index through its expression. Every write here runs in the caller's transaction.

/** Rows per statement: below SQLite's bound-parameter limit with room to spare. */
const CHUNK = 500;

/**
 * Indexes a message's text (a send, an edit) in the writing transaction: the row is replaced,
 * so an edited message is never found by its old words once the edit commits. Null text (an
 * encrypted or deleted message) or text without a term leaves no row.
 */
export async function writeMessageTerms(db: Executor, messageId: string, text: string | null) {
  const terms = text === null ? [] : indexTerms(text);
  if (terms.length === 0) {
    await db.deleteFrom('message_search').where('messageId', '=', messageId).execute();
    return;
  }
  const joined = terms.join(' ');
  await db
    .insertInto('message_search')
    .values({ messageId, terms: joined })
    .onConflict((oc) => oc.column('messageId').doUpdateSet({ terms: joined }))
    .execute();
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
}

/**
 * Messages holding every term, that `accountId` may read (a member of a conversation that is
 * not encrypted, in a workspace they belong to for channels), not deleted, newest first after
 * the keyset `before`; `limit + 1` rows so the caller knows whether there are more.
 */
export async function searchMessageRows(
  db: Executor,
  dialect: Dialect,
  accountId: string,
  terms: readonly string[],
  filters: MessageSearchFilters,
  before: { at: number; id: string } | null,
  limit: number,
) {
  const ref = sql.ref;
  const matches =
    dialect === 'sqlite'
      ? sql<boolean>`${ref('s.doc')} in (select rowid from message_search_fts
          where message_search_fts match ${ftsQuery(terms)})`
      : sql<boolean>`string_to_array(${ref('s.terms')}, ' ') @> ${sql.val([...terms])}::text[]`;
  let q = db
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
    .where('m.deletedAt', 'is', null)
    .where('c.encrypted', '=', 0)
    .where((eb) => eb.or([eb('c.kind', '<>', 'channel'), eb('wm.accountId', 'is not', null)]));
  if (filters.workspaceId) q = q.where('m.workspaceId', '=', filters.workspaceId);
  if (filters.conversationId) q = q.where('m.conversationId', '=', filters.conversationId);
  if (filters.authorId) q = q.where('m.authorId', '=', filters.authorId);
  if (filters.from !== null && filters.from !== undefined)
    q = q.where('m.createdAt', '>=', filters.from);
  if (filters.to !== null && filters.to !== undefined) q = q.where('m.createdAt', '<', filters.to);
  if (filters.inThread === true) q = q.where('m.threadRootId', 'is not', null);
  if (filters.inThread === false) q = q.where('m.threadRootId', 'is', null);
  if (before) {
    q = q.where((eb) =>
      eb.or([
        eb('m.createdAt', '<', before.at),
        eb.and([eb('m.createdAt', '=', before.at), eb('m.id', '<', before.id)]),
      ]),
    );
  }
  return q
    .orderBy('m.createdAt', 'desc')
    .orderBy('m.id', 'desc')
    .limit(limit + 1)
    .execute() as Promise<MessageTable[]>;
}
