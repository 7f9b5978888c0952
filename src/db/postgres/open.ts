import {
  Kysely,
  type Compilable,
  type CompiledQuery,
  type PostgresPool,
  type PostgresPoolClient,
  type QueryResult,
} from 'kysely';
import type pg from 'pg';

import { DEFAULT_DB_TIMEOUTS, type Db, type OpenOptions } from '../database.js';
import type { Database } from '../schema.js';
import { LazyBegin } from '../statements/deferred-writes.js';
import { namedStatements } from '../statements/prepared.js';
import { NestingGuard, TransactionRunner } from '../transaction.js';

import { SchemaDialect } from './dialect.js';
import { loadPg } from './module.js';
import { readingClient } from './reader.js';
import { ConnectionStatements } from './statements.js';
import { pgTransactions, queryResult } from './transactions.js';

/** How much later than the server's statement_timeout the client stops waiting for an answer. */
const READ_TIMEOUT_GRACE_MS = 250;

// int8 (bigint) columns hold millisecond timestamps and counters well inside 2^53: read them as
// numbers rather than pg's default strings.
const pgTypes = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') => {
    if (oid === 20) return (v: string) => Number(v);
    return loadPg().types.getTypeParser(oid, format as 'text');
  }) as typeof pg.types.getTypeParser,
};

/**
 * The connection string with the startup options of every connection in its `options`: the
 * URL's own, then
 *
 * - `plan_cache_mode=force_generic_plan`: a named statement (db/statements/prepared.ts) is planned once per
 *   connection. Left to choose, PostgreSQL kept planning the batched reads on every call (their
 *   keys are arrays of unknown length, so the generic plan's estimate stays above the custom
 *   ones'): 0.4 ms of planning for 0.08 ms of execution, on every request's session read. Every
 *   named statement is a lookup by key whose generic plan uses its index
 *   (test/foundation/batched-read-plans.test.ts). PostgreSQL applies it to unnamed statements
 *   with parameters as well: a statement whose plan depends on a value (a row count, a time
 *   bound) writes that value into its text (services/search: `timeWalkStep`). Needs PostgreSQL
 *   12 or later.
 * - the schema's `search_path`, when one is given.
 *
 * In the URL, not beside it: node-postgres lets the connection string's parameters override the
 * pool's own.
 */
export function withConnectionOptions(url: string, schema: string | undefined): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return url;
  }
  const parts: string[] = [];
  const own = parsed.searchParams.get('options');
  if (own) parts.push(own);
  parts.push('-c plan_cache_mode=force_generic_plan');
  if (schema) parts.push(`-c search_path=${schema}`);
  parsed.searchParams.set('options', parts.join(' '));
  return parsed.toString();
}

/** Opens a pool on the PostgreSQL database at `url`; see README.md beside this file. */
export function openPostgres(url: string, opts: OpenOptions): Db {
  const schema = opts.schema;
  const timeouts = { ...DEFAULT_DB_TIMEOUTS, ...opts.timeouts };
  const onConnectionError = opts.onConnectionError ?? (() => {});
  const poolSize = opts.poolSize ?? 10;
  const pool = new (loadPg().Pool)({
    // Its answers are read by svc's reader (reader.ts).
    Client: readingClient() as unknown as new () => pg.ClientBase,
    connectionString: withConnectionOptions(url, schema),
    max: poolSize,
    // A connection once opened is kept, however long it stays idle: opening one costs the server
    // a process and the client a description and a plan of each named statement again. pg-pool
    // closed those idle for 10 s, so a server under light load opened connections again and
    // again whenever two requests met (bench `instructions` counted one in every window).
    min: poolSize,
    ...(opts.idleCloseMs === undefined ? {} : { idleTimeoutMillis: opts.idleCloseMs }),
    types: pgTypes,
    application_name: opts.applicationName ?? 'svc',
    // Connecting, and waiting for a free connection when all are busy (pg-pool uses this one
    // limit for both).
    connectionTimeoutMillis: timeouts.connectMs,
    // The server cancels a statement past the budget (57014)...
    statement_timeout: timeouts.statementMs,
    // ...and the client stops waiting a little later, for a network path that stalls.
    query_timeout: timeouts.statementMs + READ_TIMEOUT_GRACE_MS,
    // A transaction left open by a vanished client does not hold its locks for long.
    idle_in_transaction_session_timeout: Math.max(10_000, timeouts.statementMs * 4),
    // Finds a dead peer on an idle connection (silent NAT or firewall drop) in about a minute.
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
  });
  // A connection that fails emits 'error' on its client, and pg-pool listens only while the
  // client is idle: without a listener of our own for the checked-out ones, a reset or a
  // terminated backend during a query would end the process. The query in flight fails on its
  // own; pg-pool drops a client that errored when it comes back. The pool re-emits an idle
  // client's error: that one is already reported by the client's listener.
  pool.on('error', () => {});
  pool.on('connect', (client) => {
    client.on('error', (err) => onConnectionError(err));
  });
  const guard = opts.checkNesting ? new NestingGuard() : null;
  const connections = discardingTimedOut(pool, opts.onStatement);
  const dialect = new SchemaDialect({ pool: connections });
  const kysely = new Kysely<Database>({ dialect: guard ? guard.dialect(dialect) : dialect });
  runCompiledDirectly(kysely, connections, guard);
  const runner = new TransactionRunner({
    dialect: 'postgres',
    execute: pgTransactions(kysely, dialect, connections),
    guard,
    onAfterCommitError: opts.onAfterCommitError ?? (() => {}),
  });
  return {
    kysely,
    dialect: 'postgres',
    file: null,
    transaction: (fn) => runner.run(fn),
    assertNotTransaction: (what) => runner.assertNotTransaction(what),
    groupCommitter: null,
    walFlusher: null,
    durable: () => null,
    diskFull: () => false,
    poolStats: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }),
    close: () => kysely.destroy(),
  };
}

/**
 * A compiled statement on the root instance (`db.kysely.executeQuery`: every prepared query,
 * `writeThen`, a key sign-in's statement) runs in one function that takes a connection, runs it
 * and gives the connection back, instead of through Kysely's executor: about ten async functions,
 * each a promise to make and resolve (6,000–7,000 instructions a statement, bench
 * `instructions`). What Kysely builds itself (`.execute()`), a transaction's statements, and
 * other instances (`withPlugin`, `withSchema`) keep Kysely's path.
 */
function runCompiledDirectly(
  kysely: Kysely<Database>,
  connections: PostgresPool,
  guard: NestingGuard | null,
): void {
  const viaExecutor = kysely.executeQuery.bind(kysely);
  const direct = async (query: CompiledQuery): Promise<QueryResult<unknown>> => {
    guard?.assertOutside('a query on db.kysely (use tx.db)');
    const connection = await connections.connect();
    try {
      return queryResult(await connection.query(query.sql, [...query.parameters]));
    } finally {
      connection.release();
    }
  };
  kysely.executeQuery = ((query: CompiledQuery | Compilable<unknown>) =>
    'compile' in query ? viaExecutor(query) : direct(query)) as Kysely<Database>['executeQuery'];
}

/**
 * The pool as Kysely sees it, except that a client whose query hit the client-side read timeout
 * is destroyed on release instead of reused (its connection still waits for the answer to the
 * abandoned query, and the next query on it would wait behind that), and that `begin` is held
 * back until the transaction's first statement (LazyBegin in ../statements/deferred-writes.ts).
 */
function discardingTimedOut(
  pool: pg.Pool,
  onStatement: ((sql: string) => void) | undefined,
): PostgresPool {
  const wrappers = new WeakMap<pg.PoolClient, PostgresPoolClient>();
  const timedOut = new WeakSet<pg.PoolClient>();
  return {
    async connect() {
      const client = await pool.connect();
      let wrapper = wrappers.get(client);
      if (!wrapper) {
        const lazyBegin = new LazyBegin();
        const statements = new ConnectionStatements(pgTypes.getTypeParser);
        const send = (text: string, values: unknown[]) => {
          onStatement?.(text);
          const name = namedStatements.get(text);
          return (
            name ? statements.run(client, name, text, values) : client.query(text, values)
          ).catch((err: unknown) => {
            if (err instanceof Error && err.message === 'Query read timeout') {
              timedOut.add(client);
            }
            throw err;
          });
        };
        wrapper = {
          // Kysely passes (sql, parameters); no cursor is configured.
          query: (async (text: string, values: unknown[]) => {
            const route = lazyBegin.route(text);
            if (route.action === 'skip') return route.result;
            if (route.beginFirst) await send('begin', []);
            return send(text, values);
          }) as unknown as PostgresPoolClient['query'],
          release: () => {
            lazyBegin.reset();
            client.release(timedOut.has(client) ? new Error('query read timeout') : undefined);
          },
        };
        wrappers.set(client, wrapper);
      }
      return wrapper;
    },
    end: () => pool.end(),
  };
}
