import type { Kysely, Transaction } from 'kysely';

import type { Database } from './schema.js';

/** A transaction plus the work to run once it has committed (events, cache drops, mail). */
export interface Tx {
  db: Transaction<Database>;
  /** Runs `fn` after a successful commit; never when the transaction rolls back. */
  onCommit(fn: () => void | Promise<void>): void;
}

/**
 * Runs `fn` in one transaction and, after commit, every callback it registered, in order.
 * A failing callback is reported to `onError` and does not undo the committed work.
 */
export async function transaction<T>(
  db: Kysely<Database>,
  fn: (tx: Tx) => Promise<T>,
  onError: (err: unknown) => void = () => {},
): Promise<T> {
  const after: Array<() => void | Promise<void>> = [];
  const result = await db
    .transaction()
    .execute((trx) => fn({ db: trx, onCommit: (cb) => after.push(cb) }));
  for (const cb of after) {
    try {
      await cb();
    } catch (err) {
      onError(err);
    }
  }
  return result;
}
