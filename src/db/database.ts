import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

import Sqlite from 'better-sqlite3';
import {
  Kysely,
  PostgresDialect,
  SqliteDialect,
  type Dialect as KyselyDialect,
  type Compilable,
  type CompiledQuery,
  type PostgresPool,
  type PostgresPoolClient,
  type QueryResult,
  type SqliteDatabase,
  type Transaction,
} from 'kysely';
import type pg from 'pg';

import { Lru } from '../lib/lru.js';

import { WalCheckpointer } from './checkpointer.js';
import { LazyBegin } from './deferred-writes.js';
import { durableCommits, WalFlusher } from './durable-commits.js';
import { loadPg } from './pg-module.js';
import { readingClient } from './pg-reader.js';
import { ConnectionStatements } from './pg-statement.js';
import { pgTransactions, queryResult } from './pg-transaction.js';
import { namedStatements } from './prepared.js';
import { GroupCommitter } from './group-commit.js';
import { ensurePrivateDatabaseFile } from './private-file.js';
import { objectRows, type DriverStatement } from './sqlite-rows.js';
import type { Database } from './schema.js';
import { NestingGuard, TransactionRunner, type Dialect, type Tx } from './transaction.js';

export type { Dialect, Tx };

/**
 * The database handle every service receives: Kysely, which dialect runs underneath, and the one
 * way to open a transaction.
 */
export interface Db {
  kysely: Kysely<Database>;
  dialect: Dialect;
  /** The SQLite file, or null on PostgreSQL. */
  file: string | null;
  /**
   * Runs `fn` in one transaction and, after commit, every callback it registered with
   * `tx.onCommit`, in order. An after-commit callback that throws is logged (`onAfterCommitError`)
   * and never undoes the commit. On SQLite the commit may be shared with other transactions
   * (group-commit.ts); the promise settles after the commit either way. Never call it inside
   * another transaction: take the caller's `Tx` instead (refused when nesting checks are on).
   */
  transaction<T>(fn: (tx: Tx) => Promise<T>): Promise<T>;
  /**
   * Throws when called inside a transaction's callback (only while nesting checks are on, as in
   * the tests): for work that must not hold a transaction open.
   */
  assertNotTransaction(what?: string): void;
  /** SQLite's group committer (group sizes for tests and metrics); null on PostgreSQL. */
  groupCommitter: GroupCommitter | null;
  /** SQLite with `flushOffLoop`: what syncs the WAL after commits (tests); null otherwise. */
  walFlusher: WalFlusher | null;
  /**
   * Null when every write committed so far is on the disk, else a promise that settles once it
   * is (SQLite with `flushOffLoop`; always null otherwise). Answers wait for it.
   */
  durable(): Promise<void> | null;
  /**
   * SQLite: the last transaction failed for lack of disk space and none has committed since
   * (readiness reports it). Always false on PostgreSQL, whose server reports its own disk.
   */
  diskFull(): boolean;
  /** Statistics for the metrics listener. */
  poolStats(): { total: number; idle: number; waiting: number };
  close(): Promise<void>;
}

export type Executor = Kysely<Database> | Transaction<Database>;

export interface OpenOptions {
  /** PostgreSQL connection URL; SQLite when null. */
  url: string | null;
  dataDir: string;
  poolSize?: number;
  /** PostgreSQL schema to use instead of `public` (tests give each file its own). */
  schema?: string;
  /** SQLite file name inside dataDir. */
  sqliteFile?: string;
  /**
   * SQLite: checkpoint the WAL from a worker thread instead of inside commits (the server; the
   * CLI leaves SQLite's own automatic checkpoints on).
   */
  backgroundCheckpoint?: boolean;
  /**
   * SQLite: commits wait for the disk on libuv's thread pool instead of on the event loop
   * (durable-commits.ts); acknowledged still means on the disk. The server; the CLI keeps
   * `synchronous=FULL`.
   */
  flushOffLoop?: boolean;
  /** Test-only: runs before each off-loop flush (a slow disk made on purpose). */
  beforeFlush?: () => Promise<void>;
  /** Told when the background checkpoint fails (it is retried on the next interval). */
  onCheckpointError?: (message: string) => void;
  /** Told when work registered with `tx.onCommit` throws (the commit stands). */
  onAfterCommitError?: (err: unknown) => void;
  /** Refuse nested transactions and root queries inside one (see NestingGuard; tests). */
  checkNesting?: boolean;
  /** Time limits; defaults in DEFAULT_DB_TIMEOUTS (docs/configuration.md). */
  timeouts?: Partial<DbTimeouts>;
  /**
   * Test-only: PostgreSQL, how long a connection beyond the pool's size may stay idle (pg-pool's
   * 10 s by default). The pool keeps its own connections however long they stay idle.
   */
  idleCloseMs?: number;
  /** PostgreSQL `application_name` of every connection (default `svc`). */
  applicationName?: string;
  /**
   * Told when a PostgreSQL connection fails outside a query (reset, terminated backend, idle
   * timeout). The connection is dropped; the request using it, if any, fails on its own.
   */
  onConnectionError?: (err: Error) => void;
  /** PostgreSQL: told of every statement sent to the server (tests count round trips). */
  onStatement?: (sql: string) => void;
}

/** How long the database may take before a request fails with TIMEOUT. */
export interface DbTimeouts {
  /** PostgreSQL: opening a connection, and waiting for a free one in the pool. */
  connectMs: number;
  /**
   * PostgreSQL: one statement (the server cancels it; the client gives up slightly later on a
   * stalled network path). SQLite: waiting for another process's write lock.
   */
  statementMs: number;
}

export const DEFAULT_DB_TIMEOUTS: DbTimeouts = { connectMs: 1500, statementMs: 3000 };

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

export function openDatabase(opts: OpenOptions): Db {
  if (opts.url) return openPostgres(opts.url, opts);
  return openSqlite(path.join(opts.dataDir, opts.sqliteFile ?? 'svc.sqlite'), opts);
}

function openSqlite(file: string, opts: OpenOptions): Db {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  ensurePrivateDatabaseFile(file);
  const sqlite = new Sqlite(file);
  // WAL lets the CLI read and write while the server runs; FULL keeps every acknowledged commit
  // through a power loss (docs/durability.md). busy_timeout makes a second process wait for the
  // write lock instead of failing at once, within the statement budget.
  // With flushOffLoop, NORMAL and the flusher's own sync of the WAL after each commit give the
  // same guarantee without holding the event loop.
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma(`synchronous = ${opts.flushOffLoop ? 'NORMAL' : 'FULL'}`);
  sqlite.pragma('foreign_keys = ON');
  const timeouts = { ...DEFAULT_DB_TIMEOUTS, ...opts.timeouts };
  sqlite.pragma(`busy_timeout = ${Math.trunc(timeouts.statementMs)}`);
  const guard = opts.checkNesting ? new NestingGuard() : null;
  const statements = cachingStatements(sqlite);
  const flusher = opts.flushOffLoop ? new WalFlusher(`${file}-wal`, opts.beforeFlush) : null;
  let dialect: KyselyDialect = new SqliteDialect({ database: statements });
  if (flusher) dialect = durableCommits(dialect, sqlite, statements.wrote, flusher);
  const kysely = new Kysely<Database>({ dialect: guard ? guard.dialect(dialect) : dialect });
  const committer = new GroupCommitter(kysely, () => sqlite.inTransaction, flusher);
  let checkpointer: WalCheckpointer | null = null;
  if (opts.backgroundCheckpoint) {
    // SQLite's own checkpoint stays as a backstop (at 40 MiB of WAL instead of 4) should the
    // worker stall.
    sqlite.pragma('wal_autocheckpoint = 10000');
    const driver = createRequire(import.meta.url).resolve('better-sqlite3');
    checkpointer = new WalCheckpointer(file, driver, 250, opts.onCheckpointError);
  }
  const runner = new TransactionRunner({
    dialect: 'sqlite',
    execute: (work) => committer.run(work),
    guard,
    onAfterCommitError: opts.onAfterCommitError ?? (() => {}),
  });
  let diskFull = false;
  return {
    kysely,
    dialect: 'sqlite',
    file,
    transaction: async (fn) => {
      try {
        const result = await runner.run(fn);
        diskFull = false;
        return result;
      } catch (err) {
        if ((err as { code?: unknown }).code === 'SQLITE_FULL') diskFull = true;
        throw err;
      }
    },
    diskFull: () => diskFull,
    assertNotTransaction: (what) => runner.assertNotTransaction(what),
    groupCommitter: committer,
    walFlusher: flusher,
    durable: () => flusher?.durable() ?? null,
    poolStats: () => ({ total: 1, idle: 1, waiting: 0 }),
    close: async () => {
      await checkpointer?.stop();
      await kysely.destroy();
      await flusher?.close();
    },
  };
}

/**
 * The connection string with the startup options of every connection in its `options`: the
 * URL's own, then
 *
 * - `plan_cache_mode=force_generic_plan`: a named statement (db/prepared.ts) is planned once per
 *   connection. Left to choose, PostgreSQL kept planning the batched reads on every call (their
 *   keys are arrays of unknown length, so the generic plan's estimate stays above the custom
 *   ones'): 0.4 ms of planning for 0.08 ms of execution, on every request's session read. Every
 *   named statement is a lookup by key whose generic plan uses its index
 *   (test/foundation/batched-read-plans.test.ts); unnamed statements are planned per call as
 *   before. Needs PostgreSQL 12 or later.
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

function openPostgres(url: string, opts: OpenOptions): Db {
  const schema = opts.schema;
  const timeouts = { ...DEFAULT_DB_TIMEOUTS, ...opts.timeouts };
  const onConnectionError = opts.onConnectionError ?? (() => {});
  const poolSize = opts.poolSize ?? 10;
  const pool = new (loadPg().Pool)({
    // Its answers are read by svc's reader (pg-reader.ts).
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
  const dialect = new PostgresDialect({ pool: connections });
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
 * back until the transaction's first statement (LazyBegin in deferred-writes.ts).
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

/**
 * Kysely prepares every query anew; preparing costs more than running a short statement. The
 * compiled SQL of a query builder chain is the same text every time, so statements are kept
 * (bounded: lists of varying length make new texts).
 */
function cachingStatements(
  sqlite: Sqlite.Database,
  max = 1000,
): SqliteDatabase & { wrote: () => boolean } {
  const cache = new Lru<string, DriverStatement>(max);
  // Whether a statement that writes was prepared (so, run) since `wrote()` last answered.
  let wrote = false;
  return {
    close: () => sqlite.close(),
    prepare(text: string) {
      let stmt = cache.get(text);
      if (!stmt) {
        stmt = objectRows(sqlite.prepare(text));
        cache.set(text, stmt);
      }
      if (!stmt.readonly) wrote = true;
      return stmt;
    },
    wrote: () => {
      const answer = wrote;
      wrote = false;
      return answer;
    },
  };
}
