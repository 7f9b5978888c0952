import type { Logger } from 'pino';

import type { Config } from './config/index.js';
import type { Secrets } from './config/secrets.js';
import type { Db } from './db/database.js';
import { openDatabase } from './db/open.js';

/** How the root (context.ts) and `svc migrate` (main.ts) open the server's database. */
export interface AppDatabaseOptions {
  /** PostgreSQL schema to use (tests). */
  pgSchema?: string;
  /** Skip starting timers (deny-list refresh, jobs, WAL checkpoints off the loop); for the CLI. */
  passive?: boolean;
  /** Refuse nested transactions (the tests; it slows every promise, see db/transaction.ts). */
  checkTransactions?: boolean;
  /** SQLite: runs before each flush of the WAL (tests make a slow disk with it). */
  beforeFlush?: () => Promise<void>;
  /** One statement's limit instead of the configured one (migrations: see MIGRATION_STATEMENT_MS). */
  statementTimeoutMs?: number;
}

/** The server's database as configured; the root and `migrateDatabase` (main.ts) open it. */
export function openAppDatabase(
  config: Config,
  secrets: Secrets,
  log: Logger,
  overrides: AppDatabaseOptions = {},
): Db {
  return openDatabase({
    url: secrets.databaseUrl,
    dataDir: config.dataDir,
    poolSize: config.database.poolSize,
    schema: overrides.pgSchema,
    backgroundCheckpoint: !overrides.passive,
    flushOffLoop: !overrides.passive,
    beforeFlush: overrides.beforeFlush,
    onCheckpointError: (message) => log.warn({ message }, 'WAL checkpoint failed; will retry'),
    onAfterCommitError: (err) => log.error({ err }, 'after-commit work failed'),
    checkNesting: overrides.checkTransactions ?? false,
    timeouts: {
      connectMs: config.database.connectTimeoutMs,
      statementMs: overrides.statementTimeoutMs ?? config.database.statementTimeoutMs,
    },
    // Tests find their own backends by this name (pg_terminate_backend).
    applicationName: overrides.pgSchema ? `svc:${overrides.pgSchema}` : 'svc',
    onConnectionError: (err) =>
      log.warn(
        { err: err.message, code: (err as { code?: unknown }).code },
        'database connection lost',
      ),
  });
}
