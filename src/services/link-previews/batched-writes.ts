import type { Db, Tx } from '../../db/database.js';

/**
 * Gathers writes that may wait a moment and makes them in one transaction every `flushMs`:
 * finished link previews arrive one at a time after their sends, and on SQLite each transaction
 * of its own would be a commit (an fsync) of its own, competing with the sends. A write that
 * fails takes the batch down with it, so the others are then tried again one by one: one bad
 * write never loses the rest. Each `add` settles when its write has committed (or failed).
 */
export class BatchedWrites<T> {
  private pending: Array<{ item: T; resolve: () => void; reject: (err: unknown) => void }> = [];
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly db: Db,
    private readonly write: (tx: Tx, item: T) => Promise<void>,
    private readonly flushMs: number,
  ) {}

  add(item: T): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.pending.push({ item, resolve, reject });
      this.timer ??= setTimeout(() => void this.flush(), this.flushMs);
    });
  }

  private async flush(): Promise<void> {
    this.timer = null;
    const batch = this.pending.splice(0);
    if (batch.length === 0) return;
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
