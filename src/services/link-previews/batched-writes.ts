import type { Db, Tx } from '../../db/database.js';

/**
 * Gathers writes that may wait a moment and makes them together every `flushMs`: finished link
 * previews arrive one at a time after their sends, and on SQLite each transaction of its own
 * would be a commit (an fsync) of its own, competing with the sends. A transaction carries at
 * most `maxBatch` writes, and the next one starts only after it has committed: better-sqlite3
 * runs on the event loop, so a transaction of a few hundred writes would hold the loop for tens
 * of milliseconds, while a run of short ones leaves it free in between. A write that fails takes
 * its transaction down with it, so the others are then tried again one by one: one bad write
 * never loses the rest. Each `add` settles when its write has committed (or failed).
 */
export class BatchedWrites<T> {
  private pending: Array<Pending<T>> = [];
  private timer: NodeJS.Timeout | null = null;
  private flushing = false;

  constructor(
    private readonly db: Db,
    private readonly write: (tx: Tx, item: T) => Promise<void>,
    private readonly flushMs: number,
    private readonly maxBatch = 32,
  ) {}

  add(item: T): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.pending.push({ item, resolve, reject });
      // Writes that arrive during a flush wait for the next one.
      if (!this.flushing) this.timer ??= setTimeout(() => void this.flush(), this.flushMs);
    });
  }

  private async flush(): Promise<void> {
    this.timer = null;
    this.flushing = true;
    let left = this.pending.length;
    while (left > 0) {
      const batch = this.pending.splice(0, Math.min(left, this.maxBatch));
      left -= batch.length;
      await this.commit(batch);
    }
    this.flushing = false;
    if (this.pending.length > 0) {
      this.timer ??= setTimeout(() => void this.flush(), this.flushMs);
    }
  }

  /** One transaction for the batch; settles every entry, never throws. */
  private async commit(batch: Array<Pending<T>>): Promise<void> {
    try {
      await this.db.transaction(async (tx) => {
        for (const entry of batch) await this.write(tx, entry.item);
      });
      for (const entry of batch) entry.resolve();
    } catch (err) {
      if (batch.length === 1) {
        batch[0]!.reject(err);
        return;
      }
      for (const entry of batch) {
        try {
          await this.db.transaction((tx) => this.write(tx, entry.item));
          entry.resolve();
        } catch (one) {
          entry.reject(one);
        }
      }
    }
  }
}

interface Pending<T> {
  item: T;
  resolve: () => void;
  reject: (err: unknown) => void;
}
