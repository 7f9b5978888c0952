import { PostgresAdapter, sql, type AliasedRawBuilder } from 'kysely';

import type { Executor } from '../types.js';

/**
 * Lookups by key made at about the same time, answered by one statement.
 *
 * On PostgreSQL every statement is a round trip that wakes the database's backend, and costs
 * node-postgres its own work per query: fifty requests reading their sessions at once cost fifty
 * of each. Here a lookup joins the batch being gathered; the batch goes out when the current turn
 * of the event loop ends, or, while `maxInFlight` batches are already out, as soon as one of them
 * answers. A key asked twice in one batch is read once.
 *
 * This is not a cache: a batch is sent after every lookup in it was asked, so each answer was
 * read after its question, as a statement of its own would have been (a session revoked before a
 * request arrives is refused by that request, whatever batch it joins).
 *
 * On SQLite a statement costs no round trip and runs on the event loop: callers read directly.
 */
export class BatchedReads<K, V> {
  private gathering: Map<string, { key: K; waiters: Waiter<V>[] }> = new Map();
  private scheduled = false;
  private inFlight = 0;
  private readonly maxBatch: number;
  private readonly maxInFlight: number;

  constructor(
    /** Reads the keys in one statement; answers the rows by `keyOf`. Missing keys: no row. */
    private readonly read: (keys: K[]) => Promise<Map<string, V>>,
    private readonly keyOf: (key: K) => string,
    opts: { maxBatch?: number; maxInFlight?: number } = {},
  ) {
    this.maxBatch = opts.maxBatch ?? 256;
    this.maxInFlight = opts.maxInFlight ?? 2;
  }

  /** The row of `key`, or undefined when there is none. */
  get(key: K): Promise<V | undefined> {
    return new Promise((resolve, reject) => {
      const id = this.keyOf(key);
      const entry = this.gathering.get(id);
      if (entry) entry.waiters.push({ resolve, reject });
      else this.gathering.set(id, { key, waiters: [{ resolve, reject }] });
      if (this.gathering.size >= this.maxBatch && this.inFlight < this.maxInFlight) this.send();
      else this.schedule();
    });
  }

  /** Batches sent and not yet answered (tests). */
  pending(): number {
    return this.inFlight;
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      if (this.inFlight < this.maxInFlight) this.send();
    });
  }

  private send(): void {
    if (this.gathering.size === 0) return;
    let batch = this.gathering;
    this.gathering = new Map();
    if (batch.size > this.maxBatch) {
      // Gathered while every slot was out: the first maxBatch go, the rest wait their turn.
      const entries = [...batch];
      batch = new Map(entries.slice(0, this.maxBatch));
      this.gathering = new Map(entries.slice(this.maxBatch));
    }
    this.inFlight += 1;
    const keys = [...batch.values()].map((e) => e.key);
    let answer: Promise<Map<string, V>>;
    try {
      answer = this.read(keys);
    } catch (err) {
      answer = Promise.reject(err);
    }
    answer
      .then(
        (rows) => {
          for (const [id, { waiters }] of batch) {
            const row = rows.get(id);
            for (const w of waiters) w.resolve(row);
          }
        },
        (err: unknown) => {
          for (const { waiters } of batch.values()) for (const w of waiters) w.reject(err);
        },
      )
      .finally(() => {
        this.inFlight -= 1;
        // What gathered while every slot was out goes now.
        if (this.gathering.size > 0) this.send();
      });
  }
}

interface Waiter<V> {
  resolve: (row: V | undefined) => void;
  reject: (err: unknown) => void;
}

/** The batchers of each database handle (a Kysely instance lives as long as its context). */
const perDatabase = new WeakMap<object, Map<string, BatchedReads<never, unknown>>>();

/**
 * The batcher named `name` of this database, made by `make` on first use, when `db` is the root
 * handle of a PostgreSQL database; null inside a transaction (its reads belong to its own
 * connection) and on SQLite, where the caller reads directly.
 */
export function batchedOnRoot<K, V>(
  db: Executor,
  name: string,
  make: () => BatchedReads<K, V>,
): BatchedReads<K, V> | null {
  if (db.isTransaction || !(db.getExecutor().adapter instanceof PostgresAdapter)) return null;
  let batchers = perDatabase.get(db);
  if (!batchers) {
    batchers = new Map();
    perDatabase.set(db, batchers);
  }
  let batcher = batchers.get(name) as BatchedReads<K, V> | undefined;
  if (!batcher) {
    batcher = make();
    batchers.set(name, batcher as unknown as BatchedReads<never, unknown>);
  }
  return batcher;
}

/**
 * A batch's keys as table `k` (PostgreSQL): `unnest` of parallel text arrays, one per column,
 * the i-th key of each array making row i. The batch read joins its single read `lateral` to
 * it, so each key is looked up by its index whatever the planner's statistics say
 * (test/foundation/batched-read-plans.test.ts).
 */
export function keysTable<C extends string>(
  // An array per column; a string only while `preparedQuery` builds the statement with its
  // placeholders.
  columns: Record<C, readonly string[] | string>,
): AliasedRawBuilder<Record<C, string>, 'k'> {
  const names = Object.keys(columns) as C[];
  const arrays = names.map((c) => sql`cast(${columns[c]} as text[])`);
  return sql<Record<C, string>>`unnest(${sql.join(arrays)})`.as<'k'>(
    sql`k(${sql.join(names.map((c) => sql.id(c)))})`,
  );
}
