import {
  sql,
  type CompiledQuery,
  type ControlledTransaction,
  type Kysely,
  type Transaction,
} from 'kysely';

import { heldStatements, type HeldWrite } from '../transaction.js';

import type { WalFlusher } from './durable-commits.js';
import type { Database } from '../schema.js';

type Work = (trx: Transaction<Database>) => Promise<unknown>;

interface Pending {
  work: Work;
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
}

/** Most transactions one commit carries; bounds how long a group holds the connection. */
const MAX_GROUP = 256;

/**
 * Runs the group's savepoint statements on the group's connection: `savepoint svc_group` before
 * a transaction of the group, `rollback to svc_group` when it fails.
 */
export type SavepointRunner = (statement: 'savepoint' | 'rollback') => void | Promise<void>;

/**
 * Group commit for SQLite. With `synchronous=FULL` every COMMIT waits for the disk, and
 * better-sqlite3 waits on the event loop, so one commit per write caps the whole server at the
 * disk's flush rate. Transactions that arrive while the loop is busy are run one after another
 * inside ONE database transaction, each in its own savepoint, and committed together: one flush
 * for the group. Each caller's promise settles only after the shared COMMIT, so nothing is
 * acknowledged before it is durable; a transaction that throws is rolled back to its savepoint
 * and fails alone. Serial execution inside the group keeps SQLite's serializable semantics.
 * The server's COMMIT does not wait for the disk (durable-commits.ts): the group's callers are
 * answered once its flush ends, and the next group, gathering meanwhile, runs after that.
 *
 * Savepoints only where one is needed: the group's first transaction has none (should it fail,
 * the whole database transaction, which holds only its writes, is rolled back and a new one
 * begun for the rest), and none is released: each transaction's savepoint nests in the one
 * before, `rollback to` the name undoes the newest (the failing transaction's writes only), and
 * the COMMIT ends them all. With `savepoints` (open.ts) the statements run on the connection
 * directly, prepared once, instead of through Kysely's query pipeline.
 */
export class GroupCommitter {
  private queue: Pending[] = [];
  private scheduled = false;
  /** The running group's writes held for its end (`Tx.atGroupEnd`), of its transactions that succeeded. */
  private late: (CompiledQuery | HeldWrite)[] = [];
  /** Sizes of recent groups, for tests and metrics. */
  lastGroupSize = 0;

  /**
   * `inTransaction` tells whether SQLite still holds the group's transaction: after disk full or
   * an I/O error SQLite rolls it back on its own, and a savepoint or ROLLBACK would then fail
   * with a message that hides the real cause.
   */
  constructor(
    private readonly kysely: Kysely<Database>,
    private readonly inTransaction: () => boolean = () => true,
    /**
     * With a flusher (durable-commits.ts) the COMMIT does not wait for the disk: the group is
     * acknowledged once its flush ends, and the next group runs meanwhile.
     */
    private readonly flusher: WalFlusher | null = null,
    private readonly savepoints: SavepointRunner | null = null,
  ) {}

  private async savepoint(
    trx: Transaction<Database>,
    statement: 'savepoint' | 'rollback',
  ): Promise<void> {
    if (this.savepoints) return this.savepoints(statement);
    await (
      statement === 'savepoint' ? sql`savepoint svc_group` : sql`rollback to savepoint svc_group`
    ).execute(trx);
  }

  /**
   * Holds writes of the running group's transaction that just succeeded until the group's end:
   * after its last transaction (and so its last savepoint), before the COMMIT.
   */
  atEnd(writes: readonly (CompiledQuery | HeldWrite)[]): void {
    this.late.push(...writes);
  }

  run<T>(work: (trx: Transaction<Database>) => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ work, resolve: resolve as (v: unknown) => void, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled || this.queue.length === 0) return;
    this.scheduled = true;
    // setImmediate lets every request already read from the sockets join this group.
    setImmediate(() => {
      void this.flush();
    });
  }

  private async flush(): Promise<void> {
    const group = this.queue.splice(0, MAX_GROUP);
    this.lastGroupSize = group.length;
    const outcomes: Array<{ ok: true; value: unknown } | { ok: false; error: unknown }> = [];
    let failure: { error: unknown } | null = null;
    let trx: ControlledTransaction<Database> | null = null;
    let durable: Promise<void> = Promise.resolve();
    this.late = [];
    try {
      trx = await this.kysely.startTransaction().execute();
      // Whether the database transaction holds writes of an earlier transaction of the group.
      let holdsOthers = false;
      for (const item of group) {
        if (holdsOthers) await this.savepoint(trx, 'savepoint');
        try {
          const value = await item.work(trx);
          outcomes.push({ ok: true, value });
          holdsOthers = true;
        } catch (error) {
          // Alone in its group (or in what is left of it): the caller gets its own error, and
          // nothing else of the group was written yet.
          if (group.length === 1) throw error;
          // SQLite rolled the whole transaction back (disk full, I/O error): the savepoint is
          // gone, and this error, not the failing ROLLBACK TO, is what every caller gets. The
          // write lock held by another process: every transaction of the group would wait out
          // busy_timeout in turn, so the group fails at once.
          if (!this.inTransaction() || isBusy(error)) throw error;
          if (holdsOthers) {
            await this.savepoint(trx, 'rollback');
          } else {
            // The first of the group: its writes are all the transaction holds.
            await trx.rollback().execute();
            trx = await this.kysely.startTransaction().execute();
          }
          outcomes.push({ ok: false, error });
        }
      }
      const committing = trx;
      // The held writes, in the order their transactions ran; a failure fails the group.
      for (const write of heldStatements(this.late.splice(0))) {
        await committing.executeQuery(write);
      }
      if (this.flusher) {
        ({ flushed: durable } = await this.flusher.commitThenFlush(() =>
          committing.commit().execute(),
        ));
      } else {
        await committing.commit().execute();
      }
    } catch (error) {
      failure = { error };
      this.late = [];
      // Releases the connection even when SQLite has already rolled back (then ROLLBACK itself
      // fails with "no transaction is active", which says nothing: the cause is `error`).
      if (trx)
        await trx
          .rollback()
          .execute()
          .catch(() => {});
    }
    if (failure) {
      // Nothing of the group is committed: every caller fails with the cause. A lone
      // transaction's own error is its answer.
      for (const item of group) item.reject(failure.error);
      this.scheduled = false;
      this.schedule();
      return;
    }
    // The connection is free for reads while this group's flush is under way; the next group
    // gathers the transactions that arrive meanwhile and runs once the flush is over.
    try {
      await durable;
    } catch (error) {
      // Committed but not known to be on the disk: nobody is told it succeeded.
      for (const item of group) item.reject(error);
      this.scheduled = false;
      this.schedule();
      return;
    }
    this.scheduled = false;
    this.schedule();
    group.forEach((item, i) => {
      const outcome = outcomes[i] as (typeof outcomes)[number];
      if (outcome.ok) item.resolve(outcome.value);
      else item.reject(outcome.error);
    });
  }
}

/** SQLITE_BUSY and its extended codes: another connection holds the lock. */
function isBusy(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('SQLITE_BUSY');
}
