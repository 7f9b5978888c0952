import {
  sql,
  type Expression,
  type ExpressionBuilder,
  type RawBuilder,
  type SelectQueryBuilder,
  type SqlBool,
} from 'kysely';

import type { Dialect, Executor } from '../../db/database.js';
import type { Database } from '../../db/schema.js';
import type { MessageTable } from '../../db/tables/messages.js';
import { keysetSlice, pastCursor, type KeysetFrom } from '../paging/index.js';

// Reading the message search index (docs/search.md). A query reaches the databases as terms
// only, so both find the same rows: every group must have one of its terms, every prefix must
// begin a term, and no excluded term may be there. SQLite asks its FTS5 table; PostgreSQL a
// GIN index over the terms as a `tsvector` made without parsing (`array_to_tsvector`), so a
// lexeme is a term exactly as the server wrote it.

/** What the index must hold for a message to match (an AND of what is listed). */
export interface IndexMatch {
  /** Each group: one of its terms (a word, its stems). */
  groups: string[][];
  /** Each a prefix of a term (`deploy*`). */
  prefixes: string[];
  /** Terms none of which may be held (`-word`). */
  excluded: string[];
}

/** Whether a match asks the index for anything a message must hold. */
export const usesIndex = (m: IndexMatch) => m.groups.length > 0 || m.prefixes.length > 0;

const ftsTerm = (t: string) => `"${t.replaceAll('"', '""')}"`;

/** FTS5's MATCH text: `("a" OR "b") AND "c"* NOT ("x")`. */
function ftsQuery(m: IndexMatch): string {
  const parts = [
    ...m.groups.map((g) => (g.length === 1 ? ftsTerm(g[0]!) : `(${g.map(ftsTerm).join(' OR ')})`)),
    ...m.prefixes.map((p) => `${ftsTerm(p)}*`),
  ];
  const positive = `(${parts.join(' AND ')})`;
  return m.excluded.length === 0
    ? positive
    : `${positive} NOT (${m.excluded.map(ftsTerm).join(' OR ')})`;
}

// Terms hold letters, digits, marks and the analysis' marks: never a quote or a backslash, but
// escape them anyway, as tsquery's input wants.
const tsLexeme = (t: string) => `'${t.replaceAll('\\', '\\\\').replaceAll("'", "''")}'`;

/** PostgreSQL's tsquery text: `('a' | 'b') & 'c':* & !('x')`, read without normalization. */
function tsQuery(m: IndexMatch): string {
  const parts = [
    ...m.groups.map((g) => `(${g.map(tsLexeme).join(' | ')})`),
    ...m.prefixes.map((p) => `${tsLexeme(p)}:*`),
    ...(m.excluded.length ? [`!(${m.excluded.map(tsLexeme).join(' | ')})`] : []),
  ];
  return parts.join(' & ');
}

const TSVECTOR = sql`array_to_tsvector(string_to_array(terms, ' '))`;

/** The condition on `message_search as s` that it matches. */
function matchCondition(dialect: Dialect, m: IndexMatch) {
  return dialect === 'sqlite'
    ? sql<boolean>`${sql.ref('s.doc')} in (select rowid from message_search_fts
        where message_search_fts match ${ftsQuery(m)})`
    : sql<boolean>`array_to_tsvector(string_to_array(${sql.ref('s.terms')}, ' '))
        @@ ${tsQuery(m)}::tsquery`;
}

/** Whether a message's stored terms satisfy the match: the walk's check, in the server. */
export function termsMatch(stored: string, m: IndexMatch): boolean {
  return termsMatcher(m)(stored);
}

/**
 * `termsMatch` for one match, its needles made once: the walk checks thousands of rows. Terms
 * are stored joined by single spaces and hold none: a term is held when it stands between two
 * spaces of the padded text. No split, no set.
 */
export function termsMatcher(m: IndexMatch): (stored: string) => boolean {
  const inner = (t: string) => ` ${t} `;
  const groups = m.groups.map((g) => g.map(inner));
  const excluded = m.excluded.map(inner);
  const prefixes = m.prefixes.map((p) => ` ${p}`);
  return (stored) => {
    const padded = ` ${stored} `;
    for (const g of groups) {
      let any = false;
      for (const needle of g) {
        if (padded.includes(needle)) {
          any = true;
          break;
        }
      }
      if (!any) return false;
    }
    for (const needle of excluded) if (padded.includes(needle)) return false;
    for (const needle of prefixes) if (!padded.includes(needle)) return false;
    return true;
  };
}

export interface MessageSearchFilters {
  workspaceId?: string | null;
  conversationId?: string | null;
  /** Messages of any of these conversations (`in:#name` naming channels of several places). */
  conversationIds?: readonly string[] | null;
  authorId?: string | null;
  /** Inclusive lower and exclusive upper bound on the send time (ms). */
  from?: number | null;
  to?: number | null;
  /** true: only thread replies; false: only messages of the conversation itself. */
  inThread?: boolean | null;
  /** Messages of threads: replies, and roots with at least one reply (`is:thread`). */
  isThread?: boolean | null;
  /** true: only messages with a finalized attachment; false: only those without. */
  hasAttachment?: boolean | null;
}

/** Search lists messages newest first over (time, id). */
export const MESSAGE_KEY = { at: 'm.createdAt', key: 'm.id' };

/** The filters as one condition on `message as m`. */
export function messageConditions(
  eb: ExpressionBuilder<Database & { m: MessageTable }, 'm'>,
  filters: MessageSearchFilters,
) {
  const all: Array<Expression<SqlBool>> = [eb('m.deletedAt', 'is', null)];
  if (filters.workspaceId) all.push(eb('m.workspaceId', '=', filters.workspaceId));
  if (filters.conversationId) all.push(eb('m.conversationId', '=', filters.conversationId));
  if (filters.conversationIds) {
    all.push(
      filters.conversationIds.length === 0
        ? sql<boolean>`1 = 0`
        : eb('m.conversationId', 'in', [...filters.conversationIds]),
    );
  }
  if (filters.authorId) all.push(eb('m.authorId', '=', filters.authorId));
  if (filters.from !== null && filters.from !== undefined)
    all.push(eb('m.createdAt', '>=', filters.from));
  if (filters.to !== null && filters.to !== undefined) all.push(eb('m.createdAt', '<', filters.to));
  if (filters.inThread === true) all.push(eb('m.threadRootId', 'is not', null));
  if (filters.inThread === false) all.push(eb('m.threadRootId', 'is', null));
  if (filters.isThread === true) {
    all.push(eb.or([eb('m.threadRootId', 'is not', null), eb('m.replyCount', '>', 0)]));
  }
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
  return eb.and(all);
}

/** The messages the index matches, joined to their index rows (`s`). */
function indexMatches(db: Executor, dialect: Dialect, match: IndexMatch) {
  return db
    .selectFrom('message_search as s')
    .innerJoin('message as m', 'm.id', 's.messageId')
    .where(matchCondition(dialect, match));
}

/**
 * A query over `message as m` narrowed to what `accountId` may read (`searchMessageRows`):
 * joined to the conversation (`c`) and the reader's memberships.
 */
function readableBy(
  q: SelectQueryBuilder<Database & { m: MessageTable }, 'm', object>,
  accountId: string,
) {
  return q
    .innerJoin('conversation as c', 'c.id', 'm.conversationId')
    .leftJoin('conversation_member as cm', (j) =>
      j
        .onRef('cm.conversationId', '=', 'c.id')
        .on('cm.accountId', '=', accountId)
        .on('cm.state', '=', 'member'),
    )
    .leftJoin('workspace_member as wm', (j) =>
      j.onRef('wm.workspaceId', '=', 'c.workspaceId').on('wm.accountId', '=', accountId),
    )
    .where('c.encrypted', '=', 0)
    .where((eb) =>
      eb.or([
        eb.and([
          eb('cm.accountId', 'is not', null),
          eb.or([eb('c.kind', '<>', 'channel'), eb('wm.accountId', 'is not', null)]),
        ]),
        eb.and([
          eb('c.kind', '=', 'channel'),
          eb('c.isPrivate', '=', 0),
          eb('wm.accountId', 'is not', null),
          eb('wm.role', '<>', 'guest'),
        ]),
      ]),
    );
}

/**
 * SQLite: an index row's `doc`, the FTS5 rowid, is its message's send time (ms) times 2^20 plus
 * its place among the rows of that millisecond (migration 0027-search-time-order), so FTS5 reads
 * a query's matches in time order, and a time bound is a rowid bound. The place is the next free
 * one when the row is written, not the order of ids: rows of one millisecond are put in order
 * by the reader (`indexOrderRows`). The SQL expression of a new row's `doc`.
 */
export const timeDoc = (messageId: string) =>
  sql<number>`(select ${sql.raw(lastDocSql('t."createdAt"'))} + 1
    from message as t where t.id = ${messageId})`;

/**
 * SQL of the last `doc` taken in the millisecond `at` (an SQL expression of a message's send
 * time), or the one before the millisecond's first when none is: a new row takes the next.
 */
export const lastDocSql = (at: string) =>
  `coalesce((select max(x.doc) from message_search as x
    where x.doc >= ${at} * ${DOC_SLOT} and x.doc < (${at} + 1) * ${DOC_SLOT}), ${at} * ${DOC_SLOT} - 1)`;

/** Places in one millisecond of `doc` (2^20). */
export const DOC_SLOT = 1_048_576;

/**
 * SQLite: up to `limit` messages `accountId` may read that match and pass the filters, read from
 * FTS5 in `doc` order from the keyset position `from` (newest first `after` it, oldest first
 * `before` it): the index answers the AND and the order, so only matches are read, and only as
 * many as the page takes. Within one millisecond the order is that of `doc`, not of ids: the
 * caller sorts, and treats the last millisecond read as unfinished when `limit` rows came.
 */
export async function indexOrderRows(
  db: Executor,
  accountId: string,
  match: IndexMatch,
  filters: MessageSearchFilters,
  from: KeysetFrom,
  limit: number,
): Promise<MessageTable[]> {
  const walk = from.before ? 'asc' : 'desc';
  const cursor = from.after ?? from.before;
  const rowid = sql.ref('f.rowid');
  const bounds: RawBuilder<boolean>[] = [];
  // Time bounds as rowid bounds, which FTS5 starts its reading from.
  if (cursor && walk === 'desc') bounds.push(sql`${rowid} < ${cursor.at + 1} * ${DOC_SLOT}`);
  if (cursor && walk === 'asc') bounds.push(sql`${rowid} >= ${cursor.at} * ${DOC_SLOT}`);
  if (typeof filters.from === 'number') bounds.push(sql`${rowid} >= ${filters.from} * ${DOC_SLOT}`);
  if (typeof filters.to === 'number') bounds.push(sql`${rowid} < ${filters.to} * ${DOC_SLOT}`);
  let q = readableBy(
    db
      .selectFrom(sql`message_search_fts`.as('f'))
      .innerJoin('message_search as s', (j) => j.on(sql<boolean>`${sql.ref('s.doc')} = ${rowid}`))
      .innerJoin('message as m', 'm.id', 's.messageId') as never,
    accountId,
  )
    .selectAll('m')
    .where(sql<boolean>`message_search_fts match ${ftsQuery(match)}`)
    .where((eb) => messageConditions(eb as never, filters));
  for (const b of bounds) q = q.where(b);
  if (cursor) q = q.where(pastCursor(MESSAGE_KEY, walk, cursor));
  return (await q.orderBy(rowid, walk).limit(limit).execute()) as MessageTable[];
}

/**
 * PostgreSQL: the matches found by the GIN index first, then joined and sorted. Left to itself,
 * the planner takes a rare word's estimate (a floor of some hundreds of rows, more for a word and
 * its stems) to mean the newest messages hold enough of them, walks `message_time_idx` and tests
 * every message's terms: a whole table for a word in six messages (650 ms at 100,000 messages,
 * against 2 ms). A materialized CTE cannot be walked that way. This path is taken for queries
 * counted as having few matches (find-messages.ts).
 */
function matchesFirst(db: Executor, match: IndexMatch) {
  return db
    .with(
      (w) => w('hits').materialized(),
      (d) =>
        d
          .selectFrom('message_search as s')
          .select('s.messageId')
          .where(matchCondition('postgres', match)),
    )
    .selectFrom('hits as s')
    .innerJoin('message as m', 'm.id', 's.messageId');
}

/**
 * Matching messages that `accountId` may read, not deleted, at most `limit` from the keyset
 * position `from` of the newest-first list (older ones `after` it, newer ones `before` it, in
 * walking order). May read: a conversation they are a member of (for a channel, in
 * a workspace they belong to), or a public channel of a workspace they belong to other than as
 * a guest, joined or not (as Slack does); never an encrypted one. Every match is read and
 * sorted: cheap for a rare query (see `countMatches`), not for a common one. Without index
 * terms (only filters, or only exclusions) the messages themselves are read.
 */
export async function searchMessageRows(
  db: Executor,
  dialect: Dialect,
  accountId: string,
  match: IndexMatch,
  filters: MessageSearchFilters,
  from: KeysetFrom,
  limit: number,
) {
  const indexed = usesIndex(match);
  const base = indexed
    ? dialect === 'postgres'
      ? (matchesFirst(db, match) as unknown as ReturnType<typeof indexMatches>)
      : indexMatches(db, dialect, match)
    : match.excluded.length > 0
      ? db
          .selectFrom('message as m')
          .leftJoin('message_search as s', 's.messageId', 'm.id')
          .where((eb) =>
            eb.or([
              eb('s.messageId', 'is', null),
              eb.not(
                matchCondition(dialect, { groups: [match.excluded], prefixes: [], excluded: [] }),
              ),
            ]),
          )
      : db.selectFrom('message as m');
  const q = readableBy(base as never, accountId)
    .selectAll('m')
    .where((eb) => messageConditions(eb as never, filters));
  return keysetSlice(q, MESSAGE_KEY, 'desc', from, limit).execute() as Promise<MessageTable[]>;
}

/**
 * How many messages match, counted up to `cap` only. SQLite's FTS5 reads its doclists no
 * further than the cap; PostgreSQL's GIN builds the whole bitmap of the rarest term first, so
 * call it there only for queries the planner does not hold to be common (`estimateMatches`).
 * The count covers every conversation, readable or not.
 */
export async function countMatches(
  db: Executor,
  dialect: Dialect,
  match: IndexMatch,
  cap: number,
): Promise<number> {
  const inner =
    dialect === 'sqlite'
      ? sql`select rowid from message_search_fts where message_search_fts match ${ftsQuery(match)}
          limit ${cap}`
      : sql`select 1 from message_search where ${TSVECTOR} @@ ${tsQuery(match)}::tsquery
          limit ${cap}`;
  const res = await sql<{
    n: number | string;
  }>`select count(*) as n from (${inner}) as hits`.execute(db);
  return Number(res.rows[0]?.n ?? 0);
}

/**
 * The planner's estimate of how many messages match (PostgreSQL only), from the statistics of
 * the terms: no index is read. A term too rare to be among the statistics' most common ones is
 * estimated at a floor of a fraction of a percent of the rows, so a low estimate says little.
 * For an AND of several groups and prefixes, the smallest of their estimates, each asked alone:
 * the planner multiplies the parts' shares as if independent, which puts two common words that
 * often go together ("budget friday") below what they match, while counting them would build
 * the whole bitmap of every part, each at least as large as the smallest.
 */
export async function estimateMatches(db: Executor, match: IndexMatch) {
  const parts: IndexMatch[] = [
    ...match.groups.map((g) => ({ groups: [g], prefixes: [], excluded: [] })),
    ...match.prefixes.map((p) => ({ groups: [], prefixes: [p], excluded: [] })),
  ];
  let smallest = Infinity;
  for (const part of parts.length > 1 ? parts : [match]) {
    smallest = Math.min(smallest, await planRows(db, part));
  }
  return Number.isFinite(smallest) ? smallest : 0;
}

async function planRows(db: Executor, match: IndexMatch) {
  const res = await sql<{ 'QUERY PLAN': Array<{ Plan: { 'Plan Rows': number } }> }>`explain
    (format json) select 1 from message_search
    where ${TSVECTOR} @@ ${tsQuery(match)}::tsquery`.execute(db);
  return Number(res.rows[0]?.['QUERY PLAN'][0]?.Plan['Plan Rows'] ?? 0);
}

/**
 * The conversations `accountId` may search (the rule of `searchMessageRows`), each with whether
 * they are a member of it.
 */
export async function searchableConversations(
  db: Executor,
  accountId: string,
): Promise<Map<string, boolean>> {
  const joined = await db
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
  const open = await db
    .selectFrom('workspace_member as wm')
    .innerJoin('conversation as c', 'c.workspaceId', 'wm.workspaceId')
    .select('c.id')
    .where('wm.accountId', '=', accountId)
    .where('wm.role', '<>', 'guest')
    .where('c.kind', '=', 'channel')
    .where('c.isPrivate', '=', 0)
    .where('c.encrypted', '=', 0)
    .execute();
  const out = new Map<string, boolean>();
  for (const r of open) out.set(r.id, false);
  for (const r of joined) out.set(r.id, true);
  return out;
}

/** Which of `conversationIds` `accountId` is a member of. */
export async function joinedAmong(
  db: Executor,
  accountId: string,
  conversationIds: readonly string[],
): Promise<Set<string>> {
  if (conversationIds.length === 0) return new Set();
  const rows = await db
    .selectFrom('conversation_member')
    .select('conversationId')
    .where('accountId', '=', accountId)
    .where('state', '=', 'member')
    .where('conversationId', 'in', [...conversationIds])
    .execute();
  return new Set(rows.map((r) => r.conversationId));
}
