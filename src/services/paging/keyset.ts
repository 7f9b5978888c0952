import { sql, type SelectQueryBuilder } from 'kysely';

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

/**
 * Narrows `q` to one page of a list sorted by (`at`, `key`) in `order`: the rows past the
 * cursor in the walking direction, at most `limit + 1` of them (the extra one says there is
 * more). Feed the rows to `keysetRows`.
 */
export function keysetQuery<DB, TB extends keyof DB, O>(
  q: SelectQueryBuilder<DB, TB, O>,
  cols: { at: string; key: string },
  order: 'asc' | 'desc',
  page: KeysetPage,
): SelectQueryBuilder<DB, TB, O> {
  const at = sql.ref(cols.at);
  const key = sql.ref(cols.key);
  // Going `before` walks against the list's order; the rows are put back in order afterwards.
  const walk = page.before ? (order === 'asc' ? 'desc' : 'asc') : order;
  const cursor = page.after ?? page.before;
  if (cursor) {
    const op = sql.raw(walk === 'asc' ? '>' : '<');
    q = q.where(
      sql<boolean>`(${at} ${op} ${cursor.at} or (${at} = ${cursor.at} and ${key} ${op} ${cursor.id}))`,
    );
  }
  return q
    .orderBy(at, walk)
    .orderBy(key, walk)
    .limit(page.limit + 1);
}

/** The rows of a `keysetQuery` as the page, in the list's order. */
export function keysetRows<R>(rows: R[], page: KeysetPage): R[] {
  const items = rows.slice(0, page.limit);
  if (page.before) items.reverse();
  return items;
}
