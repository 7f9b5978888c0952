import { sql, type RawBuilder } from 'kysely';

import type { Dialect, Executor } from '../../db/database.js';
import type { MessageTable } from '../../db/tables/messages.js';
import { inlineInteger, keysetSlice, type KeysetFrom } from '../paging/index.js';

import {
  MESSAGE_KEY,
  messageConditions,
  type IndexMatch,
  type MessageSearchFilters,
} from './match-queries.js';

// The walk's reads (docs/search.md, "How a page is found"): messages newest first with their
// index rows, checked in the server (SQLite) or in the database by the same rule (PostgreSQL,
// by `message_search.at`).

/** What the walk reads of a message: enough to place it, check it may be read, and its terms. */
export interface WalkRow {
  id: string;
  createdAt: number;
  conversationId: string;
  /** Null for a message without an index row. */
  terms: string | null;
}

/**
 * Messages from the keyset position `from` (as `searchMessageRows`), with their terms (null for a message without an index
 * row), whatever their words: the candidates a search for a common query walks (by
 * `message_time_idx`, or a conversation's or author's index when the filters name one) and
 * checks term by term. `indexedOnly`: only messages with an index row. Only what the check
 * needs is read (a whole row costs SQLite about three times as much); the few that pass are
 * read whole by `messagesByIds`.
 */
export async function messagesWithTerms(
  db: Executor,
  dialect: Dialect,
  filters: MessageSearchFilters,
  from: KeysetFrom,
  limit: number,
  indexedOnly: boolean,
): Promise<WalkRow[]> {
  const q = indexedOnly
    ? db.selectFrom('message as m').innerJoin('message_search as s', 's.messageId', 'm.id')
    : db.selectFrom('message as m').leftJoin('message_search as s', 's.messageId', 'm.id');
  const rows = await keysetSlice(
    q
      .select(['m.id', 'm.createdAt', 'm.conversationId', 's.terms'])
      .where((eb) => messageConditions(eb as never, filters)),
    MESSAGE_KEY,
    'desc',
    from,
    limit,
    // PostgreSQL plans the step for its size and position (`timeWalkStep`).
    dialect === 'postgres',
  ).execute();
  return rows.map((r) => ({
    id: r.id,
    createdAt: Number(r.createdAt),
    conversationId: r.conversationId,
    terms: r.terms ?? null,
  }));
}

/** The messages of `ids` that are not deleted, by id. */
export async function messagesByIds(
  db: Executor,
  ids: readonly string[],
): Promise<Map<string, MessageTable>> {
  if (ids.length === 0) return new Map();
  const rows = (await db
    .selectFrom('message')
    .selectAll()
    .where('id', 'in', [...ids])
    .where('deletedAt', 'is', null)
    .execute()) as MessageTable[];
  return new Map(rows.map((m) => [m.id, m]));
}

/**
 * PostgreSQL: whether `padded` (a row's terms between two spaces) satisfies the match, as
 * `termsMatcher` checks it in the server: a term is held when it stands between two spaces.
 */
function paddedHolds(padded: RawBuilder<string>, m: IndexMatch): RawBuilder<boolean> {
  const has = (needle: string) => sql<boolean>`strpos(${padded}, ${needle}) > 0`;
  const parts = [
    ...m.groups.map(
      (g) =>
        sql<boolean>`(${sql.join(
          g.map((t) => has(` ${t} `)),
          sql` or `,
        )})`,
    ),
    ...m.prefixes.map((p) => has(` ${p}`)),
    ...m.excluded.map((t) => sql<boolean>`not ${has(` ${t} `)}`),
  ];
  return sql<boolean>`(${sql.join(parts, sql` and `)})`;
}

/** What one step of a walk in time order read (`timeWalkStep`). */
export interface TimeWalkStep {
  /** Index rows read: the step's size unless the rows ran out. */
  read: number;
  /** The last index row read, where the next step goes on from; null when none was read. */
  last: { at: number; id: string } | null;
  /** The messages read that hold every term and pass the filters, whole, in walking order. */
  passed: MessageTable[];
}

/**
 * PostgreSQL: one step of the walk over the index rows in time order (`message_search_time_idx`,
 * migration 0028): the next `limit` rows from the keyset position `from` (older ones `after` it,
 * newest first; newer ones `before` it, oldest first), each row's terms checked in the database
 * (`paddedHolds`), and the messages of the rows that hold them read whole with the filters
 * checked. Only those and the last row read come back. The step's size and the time bounds are
 * written into the statement: planned for a parameter, the newest 256 of a million rows were
 * estimated at a tenth of them and read by two parallel workers, whose start cost more than the
 * read (docs/search.md, "How a page is found").
 */
export async function timeWalkStep(
  db: Executor,
  match: IndexMatch,
  filters: MessageSearchFilters,
  from: KeysetFrom,
  limit: number,
): Promise<TimeWalkStep> {
  const rows = (await timeWalkQuery(db, match, filters, from, limit).execute()) as Array<
    MessageTable & { walkAt: number; walkId: string; walkRead: number | string }
  >;
  const end = rows[rows.length - 1];
  const passed: MessageTable[] = [];
  for (const { walkAt: _at, walkId: _id, walkRead: _n, ...m } of rows) {
    if (m.id !== null) passed.push(m as MessageTable);
  }
  return {
    read: end ? Number(end.walkRead) : 0,
    last: end ? { at: Number(end.walkAt), id: end.walkId } : null,
    passed,
  };
}

/**
 * The statement of `timeWalkStep`: the messages of the rows that pass (null columns for the last
 * row read when it does not), each with the row's place in the step (`walkRead`) and position.
 */
export function timeWalkQuery(
  db: Executor,
  match: IndexMatch,
  filters: MessageSearchFilters,
  from: KeysetFrom,
  limit: number,
) {
  const walk = from.before ? 'asc' : 'desc';
  const cursor = from.after ?? from.before;
  const at = sql.ref('s.at');
  const key = sql.ref('s.messageId');
  const bounds: RawBuilder<boolean>[] = [];
  if (cursor) {
    const op = sql.raw(walk === 'asc' ? '>' : '<');
    const t = inlineInteger(cursor.at);
    bounds.push(
      sql`${at} ${op}= ${t} and (${at} ${op} ${t} or (${at} = ${t} and ${key} ${op} ${cursor.id}))`,
    );
  }
  if (typeof filters.from === 'number') bounds.push(sql`${at} >= ${inlineInteger(filters.from)}`);
  if (typeof filters.to === 'number') bounds.push(sql`${at} < ${inlineInteger(filters.to)}`);
  const where = bounds.length ? sql`where ${sql.join(bounds, sql` and `)}` : sql``;
  const order = sql.raw(walk);
  const padded = sql<string>`x.p`;
  return db
    .with(
      (w) => w('w').materialized(),
      () => sql<{ id: string; at: number; n: number; hit: boolean }>`(select x.id, x."at",
          row_number() over () as n, ${paddedHolds(padded, match)} as hit
        from (select ${key} as id, ${at} as "at", ' ' || s.terms || ' ' as p
          from message_search as s ${where}
          order by ${at} ${order}, ${key} ${order} limit ${inlineInteger(limit)}) as x)`,
    )
    .selectFrom('w')
    .leftJoinLateral(
      (eb) =>
        eb
          .selectFrom('message as m')
          .selectAll('m')
          .where(sql<boolean>`w.hit`)
          .whereRef('m.id', '=', 'w.id')
          .where((e) => messageConditions(e as never, filters))
          .as('m'),
      (j) => j.onTrue(),
    )
    .selectAll('m')
    .select(['w.at as walkAt', 'w.id as walkId', 'w.n as walkRead'])
    .where((eb) =>
      eb.or([
        eb('w.hit', '=', true),
        eb(
          'w.n',
          '=',
          eb.selectFrom('w').select((e) => e.fn.max('w.n').as('n')),
        ),
      ]),
    )
    .orderBy('w.n');
}
