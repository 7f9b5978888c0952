import { CompiledQuery, PostgresAdapter } from 'kysely';

import type { Database } from '../schema.js';
import type { Executor } from '../types.js';

// Many rows into one table, a multi-row INSERT per chunk, without building a Kysely query for
// each: for hundreds of rows of a dozen columns, Kysely's parse of the values and compile of
// the statement cost more than the database's own work (an import's batches). The SQL text of
// a chunk size is made once and reused, so SQLite's statement cache and PostgreSQL's plan
// cache see the same text every time.

/** Parameters in one statement: within SQLite's 32,766 and PostgreSQL's 65,535. */
const MAX_PARAMS = 30_000;

const texts = new Map<string, string>();

function text(
  table: string,
  columns: readonly string[],
  rows: number,
  postgres: boolean,
  suffix: string,
): string {
  const key = `${postgres ? 'p' : 's'}|${table}|${columns.join(',')}|${rows}|${suffix}`;
  let sql = texts.get(key);
  if (sql === undefined) {
    const width = columns.length;
    const tuples: string[] = [];
    for (let r = 0; r < rows; r++) {
      const marks: string[] = [];
      for (let c = 0; c < width; c++) marks.push(postgres ? `$${r * width + c + 1}` : '?');
      tuples.push(`(${marks.join(', ')})`);
    }
    sql = `insert into "${table}" (${columns.map((c) => `"${c}"`).join(', ')}) values ${tuples.join(', ')}${suffix}`;
    if (texts.size < 256) texts.set(key, sql);
  }
  return sql;
}

/**
 * Inserts `rows` (objects with at least `columns`) into `table`. `suffix` ends each statement
 * (an `on conflict ... do nothing`); it is SQL text, never input.
 */
export async function bulkInsert<T extends keyof Database & string>(
  db: Executor,
  table: T,
  columns: ReadonlyArray<keyof Database[T] & string>,
  rows: ReadonlyArray<Partial<Database[T]>>,
  suffix = '',
): Promise<void> {
  if (rows.length === 0) return;
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  const per = Math.max(1, Math.floor(MAX_PARAMS / columns.length));
  for (let i = 0; i < rows.length; i += per) {
    const chunk = rows.slice(i, i + per);
    const params: unknown[] = [];
    for (const row of chunk) {
      for (const c of columns) params.push((row as Record<string, unknown>)[c] ?? null);
    }
    await db.executeQuery(
      CompiledQuery.raw(text(table, columns, chunk.length, postgres, suffix), params),
    );
  }
}
