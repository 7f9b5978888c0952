import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

import Sqlite from 'better-sqlite3';
import { Kysely, SqliteDialect, type Dialect as KyselyDialect, type SqliteDatabase } from 'kysely';

import { RecentCache } from '../../lib/recent-cache.js';
import { DEFAULT_DB_TIMEOUTS, type Db, type OpenOptions } from '../database.js';
import type { Database } from '../schema.js';
import { NestingGuard, TransactionRunner } from '../transaction.js';

import { WalCheckpointer } from './checkpointer.js';
import { durableCommits, WalFlusher } from './durable-commits.js';
import { GroupCommitter } from './group-commit.js';
import { ensurePrivateDatabaseFile } from './private-file.js';
import { objectRows, type DriverStatement } from './rows.js';
import { removePlannerStatistics } from './statistics.js';

/** Opens (creating it if need be) the SQLite database in `file`; see README.md beside this file. */
export function openSqlite(file: string, opts: OpenOptions): Db {
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
  removePlannerStatistics(sqlite);
  const guard = opts.checkNesting ? new NestingGuard() : null;
  const statements = cachingStatements(sqlite);
  const flusher = opts.flushOffLoop ? new WalFlusher(`${file}-wal`, opts.beforeFlush) : null;
  let dialect: KyselyDialect = new SqliteDialect({ database: statements });
  if (flusher) dialect = durableCommits(dialect, sqlite, statements.wrote, flusher);
  const kysely = new Kysely<Database>({ dialect: guard ? guard.dialect(dialect) : dialect });
  const savepoint = sqlite.prepare('savepoint svc_group');
  const rollbackTo = sqlite.prepare('rollback to savepoint svc_group');
  const committer = new GroupCommitter(
    kysely,
    () => sqlite.inTransaction,
    flusher,
    (statement) => void (statement === 'savepoint' ? savepoint : rollbackTo).run(),
  );
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
    groupEnd: (writes) => committer.atEnd(writes),
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
 * Kysely prepares every query anew; preparing costs more than running a short statement. The
 * compiled SQL of a query builder chain is the same text every time, so statements are kept
 * (bounded: lists of varying length make new texts). Kept without reordering on a hit: a
 * least-recently-used map's move to the front was two of the three hash lookups of every
 * statement a request runs.
 */
function cachingStatements(
  sqlite: Sqlite.Database,
  max = 1000,
): SqliteDatabase & { wrote: () => boolean } {
  const cache = new RecentCache<string, DriverStatement>(max);
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
