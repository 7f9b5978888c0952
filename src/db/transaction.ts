import type { Kysely, Transaction } from 'kysely';

import { groupCommitterOf } from './group-commit.js';
import type { Database } from './schema.js';

/** A transaction plus the work to run once it has committed (events, cache drops, mail). */
export interface Tx {
  db: Transaction<Database>;
  /** Runs `fn` after a successful commit; never when the transaction rolls back. */
  onCommit(fn: () => void | Promise<void>): void;
}

/**
 * Runs `fn` in one transaction and, after commit, every callback it registered, in order.
 * A failing callback is reported to `onError` and does not undo the committed work. On SQLite
 * the commit may be shared with other transactions (see group-commit.ts); the promise settles
 * after the commit either way.
 */
export async function transaction<T>(
  db: Kysely<Database>,
  fn: (tx: Tx) => Promise<T>,
  onError: (err: unknown) => void = () => {},
): Promise<T> {
  const after: Array<() => void | Promise<void>> = [];
  const work = (trx: Transaction<Database>) => fn({ db: trx, onCommit: (cb) => after.push(cb) });
  const committer = groupCommitterOf(db);
  const result = committer ? await committer.run(work) : await db.transaction().execute(work);
  for (const cb of after) {
    try {
      await cb();
    } catch (err) {
      onError(err);
    }
  }
  return result;
}
