import { CompiledQuery } from 'kysely';

import { composedStatement } from './prepared.js';

/**
 * Writes a transaction makes without reading their results (a message row, its search terms, the
 * conversation's last activity, the sender's read marker, the event outbox rows) are held by
 * `tx.defer` on PostgreSQL and sent together, as one statement of data-modifying `WITH` clauses,
 * just before the commit: one round trip for all of them instead of one each. A transaction that
 * made no other query is then a single statement, run without `BEGIN`/`COMMIT` (see
 * `LazyBegin`): PostgreSQL runs one statement atomically, so the writes still commit or fail
 * together. On SQLite a statement costs no round trip, so `tx.defer` runs it at once.
 *
 * What may be deferred: a write whose result (rows, count) nobody needs and whose effect no later
 * statement of the same transaction reads. The clauses of one statement all see the database as
 * it was before the statement and must not change the same row twice; foreign keys are checked
 * at the end of the statement, so a row may refer to one inserted by an earlier clause.
 */

/**
 * Marks a statement that holds every write of its transaction (the only one it sends): it may run
 * without `begin` (see LazyBegin).
 */
export const DEFERRED_MARKER = '/* svc:deferred-writes */ ';

/** PostgreSQL accepts at most 65,535 parameters per statement; stay well inside. */
const MAX_PARAMETERS = 30_000;

/**
 * The statements that run `writes` in order: as few as the parameter limit allows, each a `WITH`
 * of the writes, their `$n` placeholders renumbered. One write alone goes as it is.
 */
export function combineWrites(writes: readonly CompiledQuery[]): CompiledQuery[] {
  const statements: CompiledQuery[] = [];
  let chunk: CompiledQuery[] = [];
  let parameters: unknown[] = [];
  const flush = () => {
    if (chunk.length === 0) return;
    const joined = chunk;
    const sql =
      joined.length === 1
        ? joined[0]!.sql
        : composedStatement(
            'with',
            joined.map((w) => w.sql),
            () => withClauses(joined),
          );
    statements.push(CompiledQuery.raw(sql, parameters));
    chunk = [];
    parameters = [];
  };
  for (const write of writes) {
    if (parameters.length + write.parameters.length > MAX_PARAMETERS) flush();
    chunk.push(write);
    for (const p of write.parameters) parameters.push(p);
  }
  flush();
  return statements;
}

/** `writes` as the clauses of one `WITH` statement, their placeholders renumbered in order. */
function withClauses(writes: readonly CompiledQuery[]): string {
  let offset = 0;
  const clauses = writes.map((w, i) => {
    const clause = `w${i} as (${shiftPlaceholders(w.sql, offset)})`;
    offset += w.parameters.length;
    return clause;
  });
  return `with ${clauses.join(', ')} select 1`;
}

/**
 * The one statement of a transaction that sends nothing else: `statement` marked so that it runs
 * without `begin` (LazyBegin), its text kept when named.
 */
export function alone(statement: CompiledQuery): CompiledQuery {
  const sql = composedStatement(
    'alone',
    [statement.sql],
    () => `${DEFERRED_MARKER}${statement.sql}`,
  );
  return CompiledQuery.raw(sql, [...statement.parameters]);
}

/**
 * `$n` placeholders of `sql` moved up by `offset`, leaving quoted text ('…', "…") untouched.
 * Kysely binds every value as a parameter, so quoted text holds identifiers and constants only.
 */
export function shiftPlaceholders(sql: string, offset: number): string {
  if (offset === 0) return sql;
  let out = '';
  let i = 0;
  while (i < sql.length) {
    const ch = sql[i]!;
    if (ch === "'" || ch === '"') {
      const end = closingQuote(sql, i, ch);
      out += sql.slice(i, end);
      i = end;
    } else if (ch === '$' && /[0-9]/.test(sql[i + 1] ?? '')) {
      let j = i + 1;
      while (j < sql.length && /[0-9]/.test(sql[j]!)) j += 1;
      out += `$${Number(sql.slice(i + 1, j)) + offset}`;
      i = j;
    } else {
      out += ch;
      i += 1;
    }
  }
  return out;
}

/** The index just past the quote that closes the one at `start` (a doubled quote is text). */
function closingQuote(sql: string, start: number, quote: string): number {
  let i = start + 1;
  while (i < sql.length) {
    if (sql[i] === quote) {
      if (sql[i + 1] === quote) i += 2;
      else return i + 1;
    } else i += 1;
  }
  return sql.length;
}

/** What a PostgreSQL client answers for a statement it did not need to send. */
export interface SkippedResult {
  command: string;
  rowCount: number;
  rows: never[];
}

/**
 * Per connection: holds back Kysely's `begin` until the transaction's first statement. When that
 * statement is the deferred writes (nothing was read or written before them), it is sent alone,
 * without `begin`, and the `commit` that follows is not sent either: a transaction of deferred
 * writes costs one round trip. Otherwise `begin` goes out just before the first statement, as it
 * would have, and nothing changes.
 */
export class LazyBegin {
  private state: 'idle' | 'pending' | 'open' | 'autocommitted' = 'idle';

  /** The connection goes back to the pool: a `begin` still held back is forgotten. */
  reset(): void {
    this.state = 'idle';
  }

  /**
   * What to do with `text`: `skip` (answer `result` without sending), or `send`, with `begin`
   * first when `beginFirst`.
   */
  route(
    text: string,
  ): { action: 'skip'; result: SkippedResult } | { action: 'send'; beginFirst: boolean } {
    const skipped = (command: string) => ({
      action: 'skip' as const,
      result: { command, rowCount: 0, rows: [] as never[] },
    });
    if (text === 'begin') {
      this.state = 'pending';
      return skipped('BEGIN');
    }
    if (text === 'commit' || text === 'rollback') {
      const previous = this.state;
      this.state = 'idle';
      if (previous === 'pending' || previous === 'autocommitted') {
        return skipped(text === 'commit' ? 'COMMIT' : 'ROLLBACK');
      }
      return { action: 'send', beginFirst: false };
    }
    if (this.state === 'autocommitted') {
      throw new Error(
        'a statement was sent after the one that held every write of the transaction',
      );
    }
    if (this.state === 'pending') {
      if (text.startsWith(DEFERRED_MARKER)) {
        this.state = 'autocommitted';
        return { action: 'send', beginFirst: false };
      }
      this.state = 'open';
      return { action: 'send', beginFirst: true };
    }
    return { action: 'send', beginFirst: false };
  }
}
