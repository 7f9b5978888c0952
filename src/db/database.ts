import type { Kysely } from 'kysely';

import type { Database } from './schema.js';
import type { WalFlusher } from './sqlite/durable-commits.js';
import type { GroupCommitter } from './sqlite/group-commit.js';
import type { Tx } from './transaction.js';
import type { Dialect, Executor } from './types.js';

export type { Dialect, Executor, Tx };

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
   * (sqlite/group-commit.ts); the promise settles after the commit either way. Never call it inside
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
   * (sqlite/durable-commits.ts); acknowledged still means on the disk. The server; the CLI keeps
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
