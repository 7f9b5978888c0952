import { CompiledQuery, SqliteAdapter } from 'kysely';

import type { Dialect, Executor, Tx } from '../../db/database.js';
import type { HeldWrite } from '../../db/transaction.js';
import { bulkInsert } from '../../db/statements/bulk-insert.js';
import { preparedQuery } from '../../db/statements/prepared.js';
import type { MessageTable } from '../../db/tables/messages.js';
import { Lru } from '../../lib/lru.js';
import { pastCursor } from '../paging/index.js';

import { analyzeText, NEEDS_FALLBACK } from './analyze.js';
import { analyzeBatch, analyzeMessage } from './analyzer.js';
import { lastDocSql, timeDoc } from './match-queries.js';
import { fallbackLanguage } from './scope-queries.js';

// The message search index (docs/search.md). Rows hold a message's distinct terms joined by
// spaces; SQLite's FTS5 table follows them through triggers (migration 0011), PostgreSQL's GIN
// index through its expression. Every write here runs in the caller's transaction.

/** Rows per statement: below SQLite's bound-parameter limit with room to spare. */
const CHUNK = 500;

// The writes of every send and edit, built and compiled once (db/statements/prepared.ts): building a
// Kysely query costs more than SQLite takes to run it.
// On SQLite the row's `doc` (the FTS5 rowid) is its place in time (`timeDoc`), so FTS5 lists a
// query's matches newest first by itself; an edit keeps it. On PostgreSQL `at` is the message's
// send time (migration 0028): given by a send, whose message row goes in the same statement;
// null, a trigger reads it from the message.
const upsertTerms = preparedQuery(3, (db, messageId: string, terms: string, at: number | null) =>
  db
    .insertInto('message_search')
    .values(
      db.getExecutor().adapter instanceof SqliteAdapter
        ? ({ doc: timeDoc(messageId), messageId, terms } as never)
        : ({ messageId, terms, at } as never),
    )
    .onConflict((oc) =>
      oc.column('messageId').doUpdateSet((eb) => ({ terms: eb.ref('excluded.terms') })),
    ),
);
/**
 * PostgreSQL: the row of a message being sent, in the statement that inserts the message. A new
 * message has no row to replace, so a plain insert: an upsert's arbiter check and speculative
 * insertion cost PostgreSQL a probe of the key's index and a second write of the row's page.
 */
const insertNewTerms = preparedQuery(3, (db, messageId: string, terms: string, at: number) =>
  db.insertInto('message_search').values({ messageId, terms, at } as never),
);
const deleteTerms = preparedQuery(1, (db, messageId: string) =>
  db.deleteFrom('message_search').where('messageId', '=', messageId),
);
/** A message's index row: its id and its terms joined by spaces. */
export interface TermsRow {
  messageId: string;
  terms: string;
}

/**
 * SQLite: index rows in one statement, in the order given, each written only while its message
 * stands undeleted (a later transaction of a group may have deleted it). Each new row's `doc` is
 * the next free place of its millisecond (`timeDoc`), counted on within the statement. `replace`:
 * a row already there takes the new terms (an edit after its send wins); `keep`: it stays, and
 * the new one is not written.
 */
function rowsInOrder(existing: 'replace' | 'keep'): HeldWrite<TermsRow>['kind'] {
  const only =
    existing === 'keep'
      ? 'not exists (select 1 from message_search as s where s."messageId" = v.column2)'
      : 'true';
  const conflict = existing === 'keep' ? 'do nothing' : 'do update set terms = excluded.terms';
  return {
    combine(items) {
      const rows = items.map((_, i) => `(${i}, ?, ?)`).join(', ');
      return CompiledQuery.raw(
        `insert into message_search (doc, "messageId", terms)
          select ${lastDocSql('m."createdAt"')}
            + row_number() over (partition by m."createdAt" order by v.column1),
            v.column2, v.column3
          from (values ${rows}) as v
          join message as m on m.id = v.column2 and m."deletedAt" is null
          where ${only}
          order by v.column1
          on conflict ("messageId") ${conflict}`,
        items.flatMap((item) => [item.messageId, item.terms]),
      );
    },
  };
}

/** SQLite, at the end of a group commit (`Tx.atGroupEnd`): the group's rows of sends and edits. */
const standingTerms = rowsInOrder('replace');

/**
 * Rows held after their sends (held-terms.ts): a message that has a row by then (an edit
 * committed meanwhile wrote its own terms) keeps it.
 */
export const heldRows = rowsInOrder('keep');

/**
 * The index terms of a message about to be written (a send, an edit), computed before its
 * transaction: the language falls back to the author's, else the workspace's, only when the
 * text is too short to tell (one read, only then). Null text (encrypted) has none.
 */
export async function messageTerms(
  db: Executor,
  text: string | null,
  authorId: string,
  workspaceId: string,
): Promise<string[]> {
  if (text === null) return [];
  const terms = await analyzeMessage(text);
  if (terms !== NEEDS_FALLBACK) return terms;
  return (await analyzeMessage(text, await fallbackOf(db, authorId, workspaceId))) as string[];
}

/** A text of a held send (held-terms.ts), with whom its language falls back to. */
export interface HeldText {
  text: string;
  authorId: string;
  workspaceId: string;
}

/**
 * The terms of several texts as `messageTerms` gives each, analyzed together on the analysis
 * thread: one hop there and back for the lot, then one more for those too short to tell their
 * language, with their fallbacks. A text whose analysis threw has its error.
 */
export async function heldTextsTerms(
  db: Executor,
  held: readonly HeldText[],
): Promise<Array<string[] | Error>> {
  const terms = await analyzeBatch(held.map((h) => [h.text, undefined]));
  const short = held.flatMap((_, i) => (terms[i] === NEEDS_FALLBACK ? [i] : []));
  if (short.length > 0) {
    const texts: Array<[string, string | null]> = [];
    for (const i of short) {
      const h = held[i]!;
      texts.push([h.text, await fallbackOf(db, h.authorId, h.workspaceId)]);
    }
    const again = await analyzeBatch(texts);
    for (const [k, i] of short.entries()) terms[i] = again[k]!;
  }
  return terms as Array<string[] | Error>;
}

/** The language an author's short texts fall back to in a workspace (read lately, or now). */
async function fallbackOf(db: Executor, authorId: string, workspaceId: string) {
  const key = `${authorId}:${workspaceId}`;
  const now = Date.now();
  let known = fallbacks.get(key);
  if (!known || now - known.at > FALLBACK_TTL_MS) {
    known = { language: await fallbackLanguage(db, authorId, workspaceId), at: now };
    fallbacks.set(key, known);
  }
  return known.language;
}

/**
 * The fallback languages read lately, so a run of short messages reads it once: a change
 * reaches this process at once (`forgetFallbacks`) and other processes within the TTL.
 */
const fallbacks = new Lru<string, { language: string | null; at: number }>(4096);
const FALLBACK_TTL_MS = 30_000;

export function forgetFallbacks() {
  fallbacks.clear();
}

/**
 * Indexes a message being sent or edited with its terms (`messageTerms`, computed before the
 * transaction): the row is replaced, so an edited message is never found by its old words once
 * the edit commits, and no terms (an encrypted or deleted message, text without a word) leave
 * no row. The write is held: on PostgreSQL for the transaction's one statement of writes
 * (`tx.defer`), which inserts a sent message too; on SQLite until the end of its group commit
 * (`tx.atGroupEnd`), so FTS5 writes one segment a group rather than one at each savepoint.
 * Either way it commits with the message: a message is findable once its edit is acknowledged.
 * A send's row goes through `HeldTerms.newMessage` (held-terms.ts), which on SQLite's server
 * process writes it a moment after the send, before any search.
 */
export function deferMessageTerms(
  tx: Tx,
  message: Pick<MessageTable, 'id' | 'createdAt'>,
  terms: string[],
) {
  if (terms.length === 0) return tx.atGroupEnd(deleteTerms.statement(tx.db, message.id));
  if (tx.dialect === 'sqlite') {
    return tx.atGroupEnd({
      kind: standingTerms,
      item: { messageId: message.id, terms: terms.join(' ') },
    });
  }
  return tx.defer(
    upsertTerms.statement(tx.db, message.id, terms.join(' '), Number(message.createdAt)),
  );
}

/**
 * `deferMessageTerms` for a message this transaction inserts (a send, a forward): it has no row
 * to replace, so on PostgreSQL its row is a plain insert in the statement that inserts the
 * message; SQLite's group-end write is the same either way.
 */
export function deferNewMessageTerms(
  tx: Tx,
  message: Pick<MessageTable, 'id' | 'createdAt'>,
  terms: string[],
) {
  if (tx.dialect === 'sqlite') return deferMessageTerms(tx, message, terms);
  if (terms.length === 0) return Promise.resolve();
  return tx.defer(
    insertNewTerms.statement(tx.db, message.id, terms.join(' '), Number(message.createdAt)),
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
    // The fallback language of short texts: the author's, else the workspace's.
    .leftJoin('search_language as la', 'la.id', 'm.authorId')
    .leftJoin('search_language as lw', 'lw.id', 'm.workspaceId')
    .select(['m.id', 'm.createdAt', 'm.text', 'm.deletedAt', 'c.encrypted'])
    .select((eb) => eb.fn.coalesce('la.language', 'lw.language').as('language'))
    .orderBy('m.createdAt')
    .orderBy('m.id')
    .limit(limit);
  if (after) {
    q = q.where(pastCursor({ at: 'm.createdAt', key: 'm.id' }, 'asc', after));
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
  rows: ReadonlyArray<
    Pick<MessageTable, 'id' | 'text' | 'deletedAt'> & { encrypted: number; language: string | null }
  >,
) {
  await dropMessageTerms(
    db,
    rows.map((r) => r.id),
  );
  await insertMessageTerms(db, batchTerms(rows));
}

/** The index rows of messages: the terms of each indexable one (not deleted, encrypted or empty). */
export function batchTerms(
  rows: ReadonlyArray<
    Pick<MessageTable, 'id' | 'text' | 'deletedAt'> & { encrypted: number; language: string | null }
  >,
): TermsRow[] {
  return rows
    .filter((r) => r.deletedAt === null && Number(r.encrypted) === 0 && r.text !== null)
    .map((r) => ({ messageId: r.id, terms: analyzeText(r.text!, r.language).join(' ') }))
    .filter((v) => v.terms !== '');
}

/** Inserts index rows of messages that have none yet (new ones: an import's batch). */
export async function insertMessageTerms(db: Executor, values: readonly TermsRow[]) {
  if (db.getExecutor().adapter instanceof SqliteAdapter) {
    // One at a time: each row's `doc` is the next free place of its millisecond, which a
    // statement of many rows would compute for all of them before inserting any.
    for (const v of values) await upsertTerms(db, v.messageId, v.terms, null);
    return;
  }
  await bulkInsert(db, 'message_search', ['messageId', 'terms'], values);
}

/** Where the backfill of older messages stands; undefined once it is done (or never began). */
export async function findBackfill(db: Executor, dialect: Dialect) {
  let q = db
    .selectFrom('search_backfill')
    .select(['afterAt', 'afterId'])
    .where('id', '=', 'messages');
  // PostgreSQL: one batch at a time, whoever runs it (the job, `svc search reindex`).
  if (dialect === 'postgres') q = q.forUpdate();
  return q.executeTakeFirst();
}

/** Starts a rebuild of every row from the oldest message, unless one is under way. */
export async function startBackfill(db: Executor) {
  await db
    .insertInto('search_backfill')
    .values({ id: 'messages', afterAt: null, afterId: null })
    .onConflict((oc) => oc.column('id').doNothing())
    .execute();
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

/** How many messages lie after `after` (all of them when null): a rebuild's work. */
export async function countToIndex(db: Executor, after: { at: number; id: string } | null) {
  let q = db.selectFrom('message as m').select((eb) => eb.fn.countAll<number | string>().as('n'));
  if (after) {
    q = q.where(pastCursor({ at: 'm.createdAt', key: 'm.id' }, 'asc', after));
  }
  const row = await q.executeTakeFirst();
  return Number(row?.n ?? 0);
}

/** Sets (or, with null, clears) the language of an account or a workspace. */
export async function setSearchLanguage(db: Executor, id: string, language: string | null) {
  forgetFallbacks();
  if (language === null) {
    await db.deleteFrom('search_language').where('id', '=', id).execute();
    return;
  }
  await db
    .insertInto('search_language')
    .values({ id, language })
    .onConflict((oc) => oc.column('id').doUpdateSet({ language }))
    .execute();
}

/** The time before which every message has its index row (row `held` of `search_backfill`). */
export async function findHeldMark(db: Executor): Promise<number | null> {
  const row = await db
    .selectFrom('search_backfill')
    .select('afterAt')
    .where('id', '=', 'held')
    .executeTakeFirst();
  return row === undefined || row.afterAt === null ? null : Number(row.afterAt);
}

/** Moves the mark of held rows (`findHeldMark`) to `at`. */
export async function saveHeldMark(db: Executor, at: number) {
  await db
    .insertInto('search_backfill')
    .values({ id: 'held', afterAt: at, afterId: null })
    .onConflict((oc) => oc.column('id').doUpdateSet({ afterAt: at }))
    .execute();
}

/**
 * Messages sent since `since` that could have terms (standing, plaintext, with text) and have no
 * index row, with the language their short texts fall back to.
 */
export function messagesLackingTerms(db: Executor, since: number) {
  return db
    .selectFrom('message as m')
    .innerJoin('conversation as c', 'c.id', 'm.conversationId')
    .leftJoin('search_language as la', 'la.id', 'm.authorId')
    .leftJoin('search_language as lw', 'lw.id', 'm.workspaceId')
    .select(['m.id', 'm.text', 'm.deletedAt', 'c.encrypted'])
    .select((eb) => eb.fn.coalesce('la.language', 'lw.language').as('language'))
    .where('m.createdAt', '>=', since)
    .where('m.deletedAt', 'is', null)
    .where('c.encrypted', '=', 0)
    .where('m.text', 'is not', null)
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom('message_search as s')
            .select('s.messageId')
            .whereRef('s.messageId', '=', 'm.id'),
        ),
      ),
    )
    .execute();
}
