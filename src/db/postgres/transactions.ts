import {
  DummyDriver,
  SingleConnectionProvider,
  Transaction,
  type CompiledQuery,
  type DatabaseConnection,
  type Dialect,
  type Kysely,
  type PostgresPool,
  type PostgresPoolClient,
  type QueryResult,
} from 'kysely';

import type { Database } from '../schema.js';

/** node-postgres's answer, as the pool's clients give it (open.ts). */
interface Answer {
  command: string | null;
  rowCount: number | null;
  rows?: unknown[];
}

/** Commands whose row count Kysely reports as `numAffectedRows` (its PostgreSQL driver). */
const AFFECTING = new Set(['INSERT', 'UPDATE', 'DELETE', 'MERGE']);

/** node-postgres's answer as Kysely's PostgreSQL driver gives it. */
export function queryResult(answer: Answer): QueryResult<unknown> {
  return {
    numAffectedRows: AFFECTING.has(answer.command ?? '') ? BigInt(answer.rowCount ?? 0) : undefined,
    rows: answer.rows ?? [],
  };
}

/**
 * Opens transactions on `pool` without Kysely's transaction machinery: `kysely.transaction()`
 * takes a connection through its driver and runs `begin`, every statement and `commit` through
 * about ten async functions of its executor, connection provider and driver each, which is most of
 * what a transaction of one statement costs besides the statement (a send's deferred writes,
 * ../statements/deferred-writes.ts). Here the transaction's query builder is Kysely's `Transaction`, on a
 * connection taken from the pool at its first statement; `begin`, `commit` and `rollback` go to
 * the pool's client as Kysely sends them, so `LazyBegin` (../statements/deferred-writes.ts) still decides which
 * are sent. Statements after the end are refused, as Kysely refuses them.
 */
export function pgTransactions(
  kysely: Kysely<Database>,
  dialect: Dialect,
  pool: PostgresPool,
): <T>(work: (trx: Transaction<Database>) => Promise<T>) => Promise<T> {
  const config = { dialect };
  const driver = new DummyDriver();
  return async (work) => {
    const connection = new LazyConnection(pool);
    const db = new Transaction<Database>({
      config,
      dialect,
      driver,
      executor: kysely
        .getExecutor()
        .withConnectionProvider(new SingleConnectionProvider(connection)),
    });
    let result;
    try {
      result = await work(db);
    } catch (err) {
      await connection.end('rollback');
      throw err;
    }
    await connection.end('commit');
    return result;
  };
}

/** A connection of `pool` taken at the first statement, in a transaction until `end`. */
class LazyConnection implements DatabaseConnection {
  private client: Promise<PostgresPoolClient> | null = null;
  private ended = false;

  constructor(private readonly pool: PostgresPool) {}

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    if (this.ended) throw new Error('the transaction has ended: run statements inside it');
    const client = await (this.client ??= this.begin());
    const answer = (await client.query(query.sql, [...query.parameters])) as unknown as Answer;
    return queryResult(answer) as QueryResult<R>;
  }

  // eslint-disable-next-line require-yield -- an iterator that refuses, as Kysely's does
  async *streamQuery(): AsyncIterableIterator<QueryResult<never>> {
    throw new Error('streaming a query is not configured for PostgreSQL');
  }

  /** Takes the connection and begins (LazyBegin holds the `begin` back). */
  private async begin(): Promise<PostgresPoolClient> {
    const client = await this.pool.connect();
    try {
      await client.query('begin', []);
    } catch (err) {
      client.release();
      throw err;
    }
    return client;
  }

  /** Ends the transaction with `how` and gives the connection back (nothing to do untaken). */
  async end(how: 'commit' | 'rollback'): Promise<void> {
    this.ended = true;
    if (!this.client) return;
    let client: PostgresPoolClient;
    try {
      client = await this.client;
    } catch {
      return; // never taken: nothing began
    }
    try {
      if (how === 'rollback') {
        await client.query('rollback', []).catch(() => {});
        return;
      }
      try {
        await client.query('commit', []);
      } catch (err) {
        await client.query('rollback', []).catch(() => {});
        throw err;
      }
    } finally {
      client.release();
    }
  }
}
