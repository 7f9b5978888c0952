import fs from 'node:fs/promises';
import path from 'node:path';

import type { Dialect as KyselyDialect, Driver, QueryResult } from 'kysely';

/**
 * Flushes SQLite's write-ahead log to the disk from libuv's thread pool, so a commit that waits
 * for the disk no longer holds up the event loop (docs/durability.md, "SQLite").
 *
 * The connection runs with `synchronous = NORMAL`: a COMMIT appends its frames to the WAL and
 * returns without an fsync. The caller's promise then waits for `sync()`, an fsync of the WAL
 * file, before it settles: nothing is acknowledged before it is on the disk, exactly as with
 * `FULL`, but deliveries, reads and new requests go on while the disk works. Requests coalesce:
 * a commit that lands while an fsync runs waits for the next one, which covers every commit made
 * meanwhile (one fsync for a group, as group commit does inside one transaction). A checkpoint
 * syncs the WAL itself before it copies frames into the main file, so a frame is never lost to
 * a WAL restart.
 */
export class WalSync {
  private handle: fs.FileHandle | null = null;
  private running: Promise<void> | null = null;
  private queued: Promise<void> | null = null;
  /** fsyncs made so far (tests, metrics). */
  syncs = 0;

  /** `gate` runs before each fsync (tests hold it to show what waits for the disk). */
  constructor(
    private readonly walFile: string,
    private readonly gate: (() => Promise<void>) | null = null,
  ) {}

  /** Resolves once everything written to the WAL before the call is on the disk. */
  sync(): Promise<void> {
    if (!this.running) {
      const run = this.once().finally(() => {
        if (this.running === run) this.running = null;
      });
      this.running = run;
      return run;
    }
    // An fsync is under way and may have started before this caller's write: the next one.
    this.queued ??= this.running
      .catch(() => undefined)
      .then(() => {
        this.queued = null;
        return this.sync();
      });
    return this.queued;
  }

  async close(): Promise<void> {
    await this.queued?.catch(() => undefined);
    await this.running?.catch(() => undefined);
    await this.handle?.close();
    this.handle = null;
  }

  private async once(): Promise<void> {
    if (this.gate) await this.gate();
    if (!this.handle) {
      this.handle = await fs.open(this.walFile, 'r+');
      // The WAL's directory entry too, once: a new file is durable only with its folder.
      const dir = await fs.open(path.dirname(this.walFile), 'r');
      try {
        await dir.sync();
      } finally {
        await dir.close();
      }
    }
    await this.handle.sync();
    this.syncs += 1;
  }
}

/**
 * `dialect` whose connection waits for `walSync` after every write made outside a transaction
 * (autocommit). Reads never wait; transactions wait in the group committer.
 */
export function syncingCommits(
  dialect: KyselyDialect,
  inTransaction: () => boolean,
  walSync: WalSync,
): KyselyDialect {
  return {
    createAdapter: () => dialect.createAdapter(),
    createQueryCompiler: () => dialect.createQueryCompiler(),
    createIntrospector: (db) => dialect.createIntrospector(db),
    createDriver: () => {
      const driver = dialect.createDriver();
      return new Proxy(driver, {
        get: (target, key) => {
          if (key === 'acquireConnection') {
            return async () => {
              const connection = await target.acquireConnection();
              return new Proxy(connection, {
                get: (conn, prop) => {
                  if (prop === 'executeQuery') {
                    return async (query: { sql: string }) => {
                      const result = (await conn.executeQuery(
                        query as never,
                      )) as QueryResult<unknown>;
                      if (!inTransaction() && wrote(query.sql, result)) await walSync.sync();
                      return result;
                    };
                  }
                  const value = conn[prop as keyof typeof conn];
                  return typeof value === 'function' ? value.bind(conn) : value;
                },
              });
            };
          }
          const value = target[key as keyof Driver];
          return typeof value === 'function' ? value.bind(target) : value;
        },
      });
    },
  };
}

/**
 * A write in autocommit mode: a statement run for its effect (INSERT, UPDATE...) or a write that
 * returned rows. COMMIT is left to the group committer, which lets the next group run while it
 * waits for the flush.
 */
function wrote(sql: string, result: QueryResult<unknown>): boolean {
  if (/^\s*(commit|end|rollback)\b/i.test(sql)) return false;
  return (
    result.numAffectedRows !== undefined || /^\s*(insert|update|delete|replace|with)\b/i.test(sql)
  );
}
