import { sql, type RawBuilder, type SelectQueryBuilder } from 'kysely';

import { validation } from '../../errors.js';
import { decodeKeyCursor, encodeKeyCursor, type CursorPosition } from '../../lib/cursor.js';

// Keyset pages over (time, key) for lists that answer a plain list whose items carry their own
// `cursor` (contract: Pagination): `after` an item's cursor continues in the list's order,
// `before` it goes back; either way the items come in the list's order. The next cursor is the
// last item's when paging `after` (the first's when paging `before`), the previous the other.

/** What a list field takes: at most one cursor, and a limit. */
export interface KeysetArgs {
  after?: string | null;
  before?: string | null;
  limit?: number | null;
}

export interface KeysetPage {
  after?: CursorPosition;
  before?: CursorPosition;
  limit: number;
}

/** VALIDATION for both cursors, a forged cursor, or a limit outside 1..max. */
export function parseKeysetArgs(
  args: KeysetArgs,
  opts: { max: number; default: number },
): KeysetPage {
  const limit = args.limit ?? opts.default;
  if (!Number.isInteger(limit) || limit < 1 || limit > opts.max) {
    throw validation(`limit must be between 1 and ${opts.max}`);
  }
  if (args.after && args.before) throw validation('pass at most one of after and before');
  const out: KeysetPage = { limit };
  if (args.after) out.after = decodeKeyCursor(args.after);
  if (args.before) out.before = decodeKeyCursor(args.before);
  return out;
}

/** An item's cursor in such a list. */
export const keyCursor = (at: number, key: string): string => encodeKeyCursor({ at, id: key });

/** Where a page starts: after an item (on in the list's order) or before one (back). */
export type KeysetFrom = Pick<KeysetPage, 'after' | 'before'>;

/**
 * Narrows `q` to one page of a list sorted by (`at`, `key`) in `order`: the rows past the
 * cursor in the walking direction, at most `limit + 1` of them (the extra one says there is
 * more). Feed the rows to `keysetRows` (or `keysetPageOf`).
 */
export function keysetQuery<DB, TB extends keyof DB, O>(
  q: SelectQueryBuilder<DB, TB, O>,
  cols: { at: string; key: string },
  order: 'asc' | 'desc',
  page: KeysetPage,
): SelectQueryBuilder<DB, TB, O> {
  return keysetSlice(q, cols, order, page, page.limit + 1);
}

/**
 * As `keysetQuery`, taking `take` rows: for a reader that fills a page over several reads (each
 * read starting after the last row of the one before, in the same walking direction).
 * `inline`: the row count and the cursor's time are written into the statement rather than
 * passed as parameters (see `pastCursor`).
 */
export function keysetSlice<DB, TB extends keyof DB, O>(
  q: SelectQueryBuilder<DB, TB, O>,
  cols: { at: string; key: string },
  order: 'asc' | 'desc',
  from: KeysetFrom,
  take: number,
  inline = false,
): SelectQueryBuilder<DB, TB, O> {
  const at = sql.ref(cols.at);
  const key = sql.ref(cols.key);
  // Going `before` walks against the list's order; the rows are put back in order afterwards.
  const walk = from.before ? (order === 'asc' ? 'desc' : 'asc') : order;
  const cursor = from.after ?? from.before;
  if (cursor) q = q.where(pastCursor(cols, walk, cursor, inline));
  return q
    .orderBy(at, walk)
    .orderBy(key, walk)
    .limit(inline ? inlineInteger(take) : take);
}

/**
 * A whole number written into a statement as it is (`inline` above), so PostgreSQL plans for
 * it. Any integer within a bigint's range: a cursor's time may be a forged one of 16 digits.
 */
export function inlineInteger(n: number): RawBuilder<number> {
  if (!Number.isInteger(n) || Math.abs(n) >= 9e18) throw new Error(`not a whole number: ${n}`);
  return sql.lit(n);
}

/**
 * The rows past `cursor` when walking (`at`, `key`) in `walk` order. The first bound alone is
 * what an index on (at, key) can start from: PostgreSQL does not take the `or` as a range, and
 * read every row newer than the cursor before the first one it kept (50,000 rows for a page
 * half-way down 100,000 messages: 70 ms instead of 2). Every keyset condition is this one.
 * `inline`: the time is written into the statement, so PostgreSQL plans for it; passed as a
 * parameter, its plan (generic on every connection: db/postgres/open.ts) guesses a third of the
 * rows past it.
 */
export function pastCursor(
  cols: { at: string; key: string },
  walk: 'asc' | 'desc',
  cursor: { at: number; id: string },
  inline = false,
): RawBuilder<boolean> {
  const at = sql.ref(cols.at);
  const key = sql.ref(cols.key);
  const op = sql.raw(walk === 'asc' ? '>' : '<');
  const t = inline ? inlineInteger(cursor.at) : cursor.at;
  return sql<boolean>`${at} ${op}= ${t} and (${at} ${op} ${t} or (${at} = ${t} and ${key} ${op} ${cursor.id}))`;
}

/** The rows of a `keysetQuery` as the page, in the list's order. */
export function keysetRows<R>(rows: R[], page: KeysetPage): R[] {
  const items = rows.slice(0, page.limit);
  if (page.before) items.reverse();
  return items;
}

/** A page answered as an object (contract, Pagination). */
export interface KeysetPageOf<R> {
  items: R[];
  /** Whether the list had more in the direction of the page when it was read. */
  hasMore: boolean;
  /** Goes on in the direction asked (as `after` when it was `after` or none, else `before`). */
  nextCursor: string | null;
  /** Goes back the other way; null on the list's first page. */
  prevCursor: string | null;
}

/** The rows of a `keysetQuery` (or `limit + 1` walked rows) as a page object. */
export function keysetPageOf<R>(
  rows: R[],
  page: KeysetPage,
  cursorOf: (row: R) => string,
): KeysetPageOf<R> {
  const items = keysetRows(rows, page);
  const hasMore = rows.length > page.limit;
  const first = items[0];
  const last = items[items.length - 1];
  const cur = (r: R | undefined) => (r === undefined ? null : cursorOf(r));
  return page.before
    ? { items, hasMore, nextCursor: hasMore ? cur(first) : null, prevCursor: cur(last) }
    : {
        items,
        hasMore,
        nextCursor: hasMore ? cur(last) : null,
        prevCursor: page.after ? cur(first) : null,
      };
}
