import { sql, type RawBuilder, type SelectQueryBuilder, type SqlBool } from 'kysely';

import type { PartWriter } from './writer.js';

// The one way an export reads a kind of record: a page at a time, each page starting after the
// last row of the one before by its sort key (keyset, not OFFSET), so a large workspace is never
// held whole and rows written meanwhile neither repeat nor shift a page.

/** Rows read per query: a page of records, and of messages with what hangs off them. */
export const PAGE = 1000;

/**
 * `(c1, c2, ...) > (v1, v2, ...)`: the rows after a page's last one, for a query ordered by
 * exactly these columns ascending. Row values compare on SQLite and PostgreSQL alike.
 */
export function after(columns: readonly string[], values: readonly unknown[]): RawBuilder<SqlBool> {
  return sql<SqlBool>`(${sql.join(columns.map((c) => sql.ref(c)))}) > (${sql.join(values)})`;
}

/** A query read page by page in the order of `keys`; `keyOf` gives a row's values of them. */
export interface PagedQuery<DB, TB extends keyof DB, R> {
  /** The rows wanted, without order or limit (the reader adds both). */
  query: SelectQueryBuilder<DB, TB, R>;
  /** Columns that order the rows and, together, tell any two apart. */
  keys: readonly string[];
  keyOf: (row: R) => readonly unknown[];
}

/** The rows of a paged query, a page of at most `limit` at a time, until one comes back short. */
export async function* pages<DB, TB extends keyof DB, R>(
  paged: PagedQuery<DB, TB, R>,
  limit = PAGE,
): AsyncGenerator<R[]> {
  let last: R | null = null;
  for (;;) {
    let q = paged.query;
    if (last !== null) q = q.where(after(paged.keys, paged.keyOf(last)));
    for (const key of paged.keys) q = q.orderBy(sql.ref(key));
    const page = await q.limit(limit).execute();
    if (page.length > 0) yield page;
    if (page.length < limit) return;
    last = page[page.length - 1]!;
  }
}

/** Writes every row of a paged query as the record `toRecord` makes of it. */
export async function writePaged<DB, TB extends keyof DB, R>(
  part: PartWriter,
  paged: PagedQuery<DB, TB, R>,
  toRecord: (row: R) => object | Promise<object>,
  limit = PAGE,
): Promise<void> {
  for await (const page of pages(paged, limit)) {
    for (const row of page) await part.write(await toRecord(row));
  }
}
