import { AsyncLocalStorage } from 'node:async_hooks';

import type {
  Compilable,
  CompiledQuery,
  DatabaseConnection,
  Dialect as KyselyDialect,
  Driver,
  Transaction,
} from 'kysely';

import { alone, combineWrites } from './statements/deferred-writes.js';

import type { Database } from './schema.js';
import type { Dialect } from './types.js';

export type { Dialect };

/** A transaction plus the work to run once it has committed (events, cache drops, mail). */
export interface Tx {
  db: Transaction<Database>;
  dialect: Dialect;
  /** Runs `fn` after a successful commit; never when the transaction rolls back. */
  onCommit(fn: () => void | Promise<void>): void;
  /**
   * Runs `fn` once the transaction has ended, committed or rolled back, before the `onCommit`
   * callbacks: for what must be undone either way (a cache told not to keep reads meanwhile).
   */
  onSettled(fn: () => void): void;
  /**
   * Runs `fn` inside the transaction once its callback has returned, just before the commit, in
   * order: for writes gathered during the transaction and made in one statement (the event
   * outbox). A throw rolls the transaction back.
   */
  beforeCommit(fn: () => Promise<void>): void;
  /**
   * A write whose result nobody needs and whose effect no later statement of this transaction
   * reads. On PostgreSQL it is held and sent with the transaction's other deferred writes as one
   * statement just before the commit (statements/deferred-writes.ts); on SQLite it runs at once. Either way
   * it commits or rolls back with the transaction, and its errors fail the transaction.
   */
  defer(write: Compilable<unknown> | CompiledQuery): Promise<void>;
  /**
   * A write that nothing reads before the commit, not even a later transaction of its group
   * (the search index's rows). On SQLite it is held until the end of the group commit, after
   * every transaction of the group and their savepoints, just before the COMMIT: FTS5 writes its
   * pending terms out at every savepoint, so held writes make one segment a group instead of one
   * a send. It runs only if its transaction succeeded, and commits with the group. On
   * PostgreSQL it is `defer`.
   */
  atGroupEnd(write: Compilable<unknown> | CompiledQuery | HeldWrite): Promise<void>;
}

/**
 * A held write (`Tx.atGroupEnd`) that goes in one statement with the group's other held writes
 * of its kind next to it, in order: one statement, so SQLite opens one statement journal, and
 * FTS5 writes its pending terms out once.
 */
export interface HeldWrite<T = unknown> {
  kind: { combine(items: T[]): CompiledQuery };
  item: T;
}

/** Held writes in order, runs of one kind made into one statement each (`most` items at most). */
export function heldStatements(
  writes: readonly (CompiledQuery | HeldWrite)[],
  most = 256,
): CompiledQuery[] {
  const out: CompiledQuery[] = [];
  for (let i = 0; i < writes.length;) {
    const write = writes[i]!;
    if (!('kind' in write)) {
      out.push(write);
      i += 1;
      continue;
    }
    const items: unknown[] = [];
    while (i < writes.length && items.length < most) {
      const next = writes[i]!;
      if (!('kind' in next) || next.kind !== write.kind) break;
      items.push(next.item);
      i += 1;
    }
    out.push(write.kind.combine(items));
  }
  return out;
}

export interface TransactionRunnerOptions {
  dialect: Dialect;
  /**
   * Runs `work` in one database transaction and commits it, or rolls it back when `work` throws:
   * on SQLite through the group committer (sqlite/group-commit.ts), on PostgreSQL on a connection of the
   * pool (postgres/transactions.ts).
   */
  execute: <T>(work: (trx: Transaction<Database>) => Promise<T>) => Promise<T>;
  /** Told of every after-commit callback that throws (the commit stands). */
  onAfterCommitError: (err: unknown) => void;
  /** Refuses nested transactions when given (see NestingGuard). */
  guard: NestingGuard | null;
  /**
   * Takes a successful transaction's `atGroupEnd` writes, to run at its group's end (SQLite's
   * group commit); without it they are deferred writes.
   */
  groupEnd?: (writes: (CompiledQuery | HeldWrite)[]) => void;
}

/**
 * Knows whether the running code is inside a transaction's callback, to refuse what must not
 * happen there: opening a second transaction (on SQLite it waits for the group the caller holds:
 * a deadlock; on PostgreSQL it is not atomic with the first), a query on the root `db.kysely`
 * instead of `tx.db` (the same two faults), and work declared with `assertNotTransaction`. It
 * costs an AsyncLocalStorage on every promise of the process (six times slower awaits in a
 * micro-benchmark on Node 20), so the test suite turns it on and production leaves it off
 * (docs/decisions.md, "Transactions").
 */
export class NestingGuard {
  private readonly scope = new AsyncLocalStorage<true>();

  run<T>(fn: () => Promise<T>): Promise<T> {
    return this.scope.run(true, fn);
  }

  assertOutside(what: string): void {
    if (this.scope.getStore()) {
      throw new Error(
        `${what} must not run inside a transaction: pass the Tx down, or do it after commit`,
      );
    }
  }

  /** `dialect` whose connections refuse to be taken from inside a transaction's callback. */
  dialect(dialect: KyselyDialect): KyselyDialect {
    return withAcquire(dialect, (acquire) => {
      this.assertOutside('a query on db.kysely (use tx.db)');
      return acquire();
    });
  }
}

/** `dialect` whose driver hands out connections through `acquire` (the rest unchanged). */
export function withAcquire(
  dialect: KyselyDialect,
  acquire: (inner: () => Promise<DatabaseConnection>) => Promise<DatabaseConnection>,
): KyselyDialect {
  return {
    createAdapter: () => dialect.createAdapter(),
    createQueryCompiler: () => dialect.createQueryCompiler(),
    createIntrospector: (db) => dialect.createIntrospector(db),
    createDriver: () => {
      const driver = dialect.createDriver();
      return new Proxy(driver, {
        get: (target, key) => {
          if (key === 'acquireConnection') return () => acquire(() => target.acquireConnection());
          const value = target[key as keyof Driver];
          return typeof value === 'function' ? value.bind(target) : value;
        },
      });
    },
  };
}

/**
 * Runs transactions for `Db`: one database transaction per call (on SQLite shared with others by
 * group commit), then, after commit, every callback registered with `onCommit`, in order. A
 * callback that throws is reported and does not undo the committed work, nor stop the callbacks
 * after it.
 */
export class TransactionRunner {
  constructor(private readonly opts: TransactionRunnerOptions) {}

  async run<T>(fn: (tx: Tx) => Promise<T>): Promise<T> {
    this.assertNotTransaction('db.transaction()');
    const after: Array<() => void | Promise<void>> = [];
    const settled: Array<() => void> = [];
    const { dialect } = this.opts;
    const work = (trx: Transaction<Database>) => {
      const before: Array<() => Promise<void>> = [];
      const deferred: CompiledQuery[] = [];
      const late: (CompiledQuery | HeldWrite)[] = [];
      const { groupEnd } = this.opts;
      const tx: Tx = {
        db: trx,
        dialect,
        onCommit: (cb) => void after.push(cb),
        onSettled: (cb) => void settled.push(cb),
        beforeCommit: (cb) => void before.push(cb),
        defer:
          dialect === 'postgres'
            ? async (write) => void deferred.push(compiled(write))
            : async (write) => void (await trx.executeQuery(compiled(write))),
        atGroupEnd: async (write) => {
          const held = 'kind' in write ? write : compiled(write);
          if (groupEnd) late.push(held);
          else await tx.defer('kind' in held ? held.kind.combine([held.item]) : held);
        },
      };
      const body = async () => {
        const result = await fn(tx);
        // A callback may register another (none does today); the loop runs those too.
        for (let i = 0; i < before.length; i += 1) await before[i]!();
        const statements = combineWrites(deferred);
        if (statements.length === 1) {
          // Every write of the transaction in one statement: it may run without BEGIN.
          await trx.executeQuery(alone(statements[0]!));
        } else {
          for (const statement of statements) await trx.executeQuery(statement);
        }
        // Last: only a transaction that ran to its end hands its held writes to the group.
        if (late.length > 0) groupEnd?.(late);
        return result;
      };
      return this.opts.guard ? this.opts.guard.run(body) : body();
    };
    let result: T;
    try {
      result = await this.opts.execute(work);
    } finally {
      for (const cb of settled) {
        try {
          cb();
        } catch (err) {
          this.opts.onAfterCommitError(err);
        }
      }
    }
    for (const cb of after) {
      try {
        await cb();
      } catch (err) {
        this.opts.onAfterCommitError(err);
      }
    }
    return result;
  }

  /**
   * Throws when called inside a transaction's callback: for work that must not hold a
   * transaction open (a second transaction, password hashing, mail, outbound requests).
   */
  assertNotTransaction(what = 'this'): void {
    this.opts.guard?.assertOutside(what);
  }
}

function compiled(write: Compilable<unknown> | CompiledQuery): CompiledQuery {
  return 'compile' in write ? write.compile() : write;
}
