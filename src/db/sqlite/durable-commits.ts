import fs from 'node:fs/promises';
import path from 'node:path';

import type Sqlite from 'better-sqlite3';
import type { CompiledQuery, DatabaseConnection, Dialect as KyselyDialect } from 'kysely';

import { withAcquire } from '../transaction.js';

/**
 * Flushes SQLite's write-ahead log to the disk on libuv's thread pool, so the event loop goes on
 * with deliveries, reads of the sockets, new requests and the next group of transactions while
 * the disk works.
 *
 * The server's connection runs with `synchronous=NORMAL`: a COMMIT writes its WAL frames (into
 * the page cache, cheap) and returns without waiting for the disk. Then:
 *   - a group commit (group-commit.ts) is acknowledged only once a flush that started after its
 *     COMMIT has ended, so acknowledged means on the disk, as with `FULL`; the connection is free
 *     meanwhile, and the next group runs and commits while this one's flush is under way;
 *   - any other write (a COMMIT outside group commit, a statement outside a transaction) waits
 *     for its flush before its promise settles, holding the connection;
 *   - fdatasync covers the whole file, so a flush covers every commit before it, and flushes run
 *     one at a time, in order: acknowledgements keep the commits' order.
 * A statement that runs while a flush is under way may read what the flushing commits wrote
 * before it is on the disk. What leaves the process waits: answers to requests wait for
 * `durable()`, events are published after the flush of their commit, and a write that builds on
 * such a row commits after it, so it is acknowledged only with it.
 * The WAL header written when SQLite starts the log over after a checkpoint is synced by SQLite
 * itself in NORMAL mode; checkpoints sync the WAL before and the database after. The directory
 * is synced at the first flush, so a newly created log survives a power loss with its entry.
 */
export class WalFlusher {
  private handle: fs.FileHandle | null = null;
  private current: Promise<void> | null = null;
  /** The writes the flush under way covers (those made before it started). */
  private currentCovers = 0;
  private next: Promise<void> | null = null;
  /** Set while group commit runs its COMMIT: the flush is left to it (`commitThenFlush`). */
  private deferring = false;
  private deferred: Promise<void> | null = null;
  /** Writes made (statements that ended a writing transaction, writes outside one). */
  private committed = 0;
  /** Of those, how many are known to be on the disk. */
  private synced = 0;
  /** Flushes done (tests and metrics). */
  flushes = 0;

  constructor(
    private readonly walFile: string,
    /** Test-only: runs before each flush (a slow disk made on purpose). */
    private readonly beforeFlush?: () => Promise<void>,
  ) {}

  /**
   * Resolves once a flush that started after this call has ended: the writes made so far are on
   * the disk. Calls made while a flush is under way share the one after it.
   */
  flush(): Promise<void> {
    if (!this.current) {
      this.currentCovers = this.committed;
      this.current = this.run().finally(() => {
        this.current = null;
      });
      return this.current;
    }
    if (!this.next) {
      const after = () => {
        this.next = null;
        return this.flush();
      };
      this.next = this.current.then(after, after);
    }
    return this.next;
  }

  /**
   * Runs `commit` (a COMMIT through the connection wrapper) and returns, without waiting for it,
   * the flush that makes it durable: the caller acknowledges once that settles, with the
   * connection already free for the next statement.
   */
  async commitThenFlush(commit: () => Promise<unknown>): Promise<{ flushed: Promise<void> }> {
    this.deferred = null;
    this.deferring = true;
    try {
      await commit();
    } finally {
      this.deferring = false;
    }
    const flushed = this.deferred ?? Promise.resolve();
    this.deferred = null;
    // In an object: a promise returned as such would be adopted, and awaited here.
    return { flushed };
  }

  /**
   * Null when every write made so far is on the disk; otherwise a promise that settles once it
   * is (rejected while flushing fails). Answers to requests wait for it (http/app.ts), so what
   * a client is told never rests on a write the disk does not yet hold.
   */
  durable(): Promise<void> | null {
    if (this.synced >= this.committed) return null;
    return this.until(this.committed);
  }

  private async until(target: number): Promise<void> {
    while (this.synced < target) {
      // The flush under way, when it covers the target; otherwise the next one.
      await (this.current && this.currentCovers >= target ? this.current : this.flush());
    }
  }

  /**
   * After a statement that ended a transaction which wrote, or a write outside one. Only the
   * group's own COMMIT (`isCommit`, the first one while `commitThenFlush` runs) leaves its flush
   * to group commit; any other write waits for its flush here.
   */
  afterWrite(isCommit: boolean): Promise<void> {
    this.committed += 1;
    const flushed = this.flush();
    if (!this.deferring || !isCommit) return flushed;
    this.deferring = false;
    // Group commit awaits it later; a failure is its answer, not an unhandled rejection.
    flushed.catch(() => {});
    this.deferred = flushed;
    return Promise.resolve();
  }

  private async run(): Promise<void> {
    const covers = this.committed;
    try {
      await this.beforeFlush?.();
      if (this.handle) {
        await this.handle.datasync();
      } else {
        // First flush: the log file and its directory entry. SQLite deletes the log only when
        // the database's last connection closes, and the server's stays open until the flusher
        // is closed, so the file opened here is the log for as long as it is used, and a flush
        // needs no `stat` of the path to find out (it showed in profiles under fan-out load).
        this.handle = await fs.open(this.walFile, 'r');
        await this.handle.datasync();
        await syncDirectory(path.dirname(this.walFile));
      }
      this.flushes += 1;
      if (covers > this.synced) this.synced = covers;
    } catch (err) {
      throw asSqliteError(err);
    }
  }

  async close(): Promise<void> {
    await this.current?.catch(() => {});
    await this.next?.catch(() => {});
    await this.handle?.close().catch(() => {});
    this.handle = null;
  }
}

async function syncDirectory(dir: string): Promise<void> {
  const handle = await fs.open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/**
 * A failed flush answers like SQLite's own failed sync would have (so errors.ts maps it to
 * UNAVAILABLE `disk`): the transaction's outcome is unknown, and it is not acknowledged.
 */
function asSqliteError(err: unknown): Error {
  const cause = err as NodeJS.ErrnoException;
  const e = new Error(`flushing the write-ahead log failed: ${cause.message}`, { cause });
  (e as Error & { code: string }).code =
    cause.code === 'ENOSPC' ? 'SQLITE_FULL' : 'SQLITE_IOERR_FSYNC';
  return e;
}

/**
 * `dialect` whose connection flushes the WAL (`flusher`) after every statement that ends a
 * transaction which wrote, and after every write outside a transaction: before that statement's
 * promise settles, or, for group commit's COMMIT, in `commitThenFlush`. `wrote()` tells whether
 * the connection has written since it last asked (it resets the answer).
 */
export function durableCommits(
  dialect: KyselyDialect,
  sqlite: Sqlite.Database,
  wrote: () => boolean,
  flusher: WalFlusher,
): KyselyDialect {
  const wrapped = new WeakMap<DatabaseConnection, DatabaseConnection>();
  const wrap = (conn: DatabaseConnection): DatabaseConnection => {
    const known = wrapped.get(conn);
    if (known) return known;
    const w: DatabaseConnection = {
      executeQuery: async <R>(query: CompiledQuery) => {
        const result = await conn.executeQuery<R>(query);
        if (!sqlite.inTransaction && wrote()) await flusher.afterWrite(query.sql === 'commit');
        return result;
      },
      streamQuery: (query, chunkSize) => conn.streamQuery(query, chunkSize),
    };
    wrapped.set(conn, w);
    return w;
  };
  return withAcquire(dialect, async (acquire) => wrap(await acquire()));
}
