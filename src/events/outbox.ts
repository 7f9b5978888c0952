import type { CompiledQuery } from 'kysely';
import type { Logger } from 'pino';

import type { Db } from '../db/database.js';
import type { EventOutboxTable } from '../db/tables/events.js';
import type { Tx } from '../db/transaction.js';
import { writeThen } from '../db/statements/write-then.js';
import { newId } from '../lib/ids.js';

import type { BusEvent, EventBus } from './bus.js';
import { payloadJson } from './event-json.js';
import type { EventPort } from './port.js';
import {
  CHUNK,
  claimOutboxRows,
  deferOutboxRows,
  deleteOutboxRows,
  hasDueOutboxRows,
  toBusEvent,
  outboxRowAfterStatement,
} from './queries.js';

export interface OutboxOptions {
  db: Db;
  bus: EventBus;
  log: Logger;
  /**
   * Whether publishing on this process's bus reaches the listeners. False for the command line
   * with the in-process bus: its rows are left for the servers' drainer.
   */
  reachesListeners: boolean;
  /**
   * Whether events are written as rows at all. False for a server on the in-process bus: every
   * listener lives in this process, so an event it fails to publish (a crash between commit and
   * publish) is one no listener is left to miss; the rows would be written and removed for
   * nothing on the hot path. True wherever a listener elsewhere could miss it: the command line,
   * and every process on Redis.
   */
  keepRows: boolean;
  /** How often the drainer looks for rows to deliver (default 1 s). */
  drainIntervalMs?: number;
  /**
   * How old a row written by a process that publishes itself must be before the drainer takes
   * it over (that process crashed, or its publish failed); default 10 s.
   */
  graceMs?: number;
  /**
   * How long delivered rows wait to be removed together (default 100 ms): one delete for every
   * event of that time instead of about one per event, each a round trip on PostgreSQL. Well
   * inside the grace period, so the drainer never takes a delivered row for a lost one.
   */
  removalDelayMs?: number;
  /**
   * How long closing waits for this process's events still on their way to Redis (default 2 s);
   * what is not acknowledged by then keeps its row for a drainer.
   */
  closeWaitMs?: number;
}

/**
 * The transactional outbox (docs/events.md, "Delivery"). Every event is written as an
 * `event_outbox` row in the transaction that raised it (one insert per transaction, however many
 * events), so it commits or rolls back with the change. After the commit the writing process
 * issues the publish at once, without waiting for it, and removes a row only once its event has
 * really gone out (every listener of the in-process bus has it, or Redis acknowledged it), in
 * shared batches. An event held in memory while Redis is away keeps its row. Rows nobody
 * published (written by the command line without Redis, left by a process that died, or held
 * past the grace period) are claimed by a server's drainer, published in order and removed; the
 * subscribers of a row taken over from its writer are then told to resync, as they may have had
 * newer events of its topic meanwhile. Delivery is at least once: a crash after the publish and
 * before the removal, or a writer whose Redis comes back after a drainer took its rows over,
 * publishes the event again.
 */
export class Outbox implements EventPort {
  /** This process's id in `origin`; a restart is another process. */
  readonly origin = newId();
  private readonly pending = new WeakMap<Tx, Array<EventOutboxTable>>();
  /** This process's rows whose publish was issued and has not settled yet, by id. */
  private readonly inFlight = new Map<string, Promise<void>>();
  private readonly delivered: string[] = [];
  private removing: Promise<void> | null = null;
  /** Ends the current removal's wait early (flush, close). */
  private removeNow: (() => void) | null = null;
  private draining: Promise<number> | null = null;
  private timer: NodeJS.Timeout | null = null;
  private closed = false;
  /** Settles when close() begins: the drainer stops waiting for its publishes. */
  private readonly closing: Promise<void>;
  private beginClosing: () => void = () => {};
  private readonly graceMs: number;
  private readonly drainedListeners: Array<() => void> = [];

  constructor(private readonly opts: OutboxOptions) {
    this.graceMs = opts.graceMs ?? 10_000;
    this.closing = new Promise((resolve) => {
      this.beginClosing = resolve;
    });
  }

  /**
   * Registers `event` with `tx`: its row is written just before the commit, and after the commit
   * it is published (when this process reaches the listeners) in the order of registration.
   */
  publishOnCommit(tx: Tx, event: BusEvent): void {
    if (!this.opts.keepRows) {
      tx.onCommit(() => this.publishNow(event));
      return;
    }
    const row = this.rowOf(event);
    let rows = this.pending.get(tx);
    if (!rows) {
      const list: EventOutboxTable[] = [];
      rows = list;
      this.pending.set(tx, list);
      tx.beforeCommit(() => deferOutboxRows(tx, list));
    }
    rows.push(row);
    if (this.opts.reachesListeners) tx.onCommit(() => this.deliver(row.id, event));
  }

  /**
   * Runs `write` (an update or delete that returns a row per row it changed) and raises `event`
   * only when it changed a row; the two commit together. For a change that may turn out to be
   * none (a read marker already further on), where deciding would otherwise take a transaction
   * around the write. On PostgreSQL it is one statement, run without `BEGIN`/`COMMIT`: the
   * event's row is inserted `where exists` a row the write returned (one round trip instead of
   * four). Resolves to whether the write changed a row; the event's publish is issued, as after
   * a commit, before it resolves.
   */
  async publishIfChanged(write: CompiledQuery, event: BusEvent): Promise<boolean> {
    const { db } = this.opts;
    if (db.dialect === 'sqlite') {
      return db.transaction(async (tx) => {
        const res = await tx.db.executeQuery(write);
        if (res.rows.length === 0) return false;
        this.publishOnCommit(tx, event);
        return true;
      });
    }
    db.assertNotTransaction('publishIfChanged');
    if (!this.opts.keepRows) {
      if ((await db.kysely.executeQuery(write)).rows.length === 0) return false;
      this.publishNow(event);
      return true;
    }
    const row = this.rowOf(event);
    const res = await db.kysely.executeQuery(
      writeThen(write, outboxRowAfterStatement(db.kysely, row)),
    );
    if (Number(res.rows[0]?.written ?? 0) === 0) return false;
    if (this.opts.reachesListeners) this.deliver(row.id, event);
    return true;
  }

  /** Publishes an event that has no row (a server on the in-process bus): never awaited. */
  private publishNow(event: BusEvent): void {
    this.opts.bus
      .publish(event)
      .catch((err: unknown) => this.opts.log.error({ err, type: event.type }, 'publish failed'));
  }

  private rowOf(event: BusEvent): EventOutboxTable {
    return {
      id: newId(),
      topic: event.topic,
      type: event.type,
      at: event.at,
      payload: payloadJson(event),
      origin: this.opts.reachesListeners ? this.origin : null,
      createdAt: Date.now(),
    };
  }

  /**
   * Calls `listener` after the drainer published rows: changes another process made (the command
   * line without Redis, or a process that crashed before publishing), for what keeps copies of
   * data in memory and cannot tell from the events alone what they touched.
   */
  onDrained(listener: () => void): void {
    this.drainedListeners.push(listener);
  }

  /** Starts the drainer (servers only). */
  start(): void {
    if (this.timer || this.closed) return;
    this.timer = setInterval(() => {
      this.drain().catch((err: unknown) => this.opts.log.error({ err }, 'outbox drain failed'));
    }, this.opts.drainIntervalMs ?? 1000);
    this.timer.unref();
  }

  /**
   * Delivers the rows due now: those nobody publishes (origin null) and those whose writer has
   * not removed them within the grace period. Each batch is claimed first (on PostgreSQL with
   * `for update skip locked`, so concurrent drainers take disjoint rows), then published in
   * order and removed. Resolves to the number of events published.
   */
  drain(): Promise<number> {
    if (this.draining) return this.draining;
    const run = this.drainAll().finally(() => {
      this.draining = null;
    });
    this.draining = run;
    return run;
  }

  /**
   * Waits until the events this process issued so far have settled (acknowledged by Redis, or
   * given up) and the rows of those delivered are removed. While Redis is away it waits for it.
   */
  async flush(): Promise<void> {
    await Promise.allSettled([...this.inFlight.values()]);
    await this.removeDelivered();
  }

  /**
   * Stops the drainer, waits a little (`closeWaitMs`) for the events still on their way, and
   * removes the rows of those delivered; the others keep theirs for a drainer.
   */
  async close(): Promise<void> {
    this.closed = true;
    this.beginClosing();
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.draining?.catch(() => {});
    if (this.inFlight.size > 0) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        Promise.allSettled([...this.inFlight.values()]),
        new Promise((resolve) => {
          timer = setTimeout(resolve, this.opts.closeWaitMs ?? 2_000);
        }),
      ]);
      clearTimeout(timer);
    }
    await this.removeDelivered().catch((err: unknown) =>
      this.opts.log.warn({ err }, 'outbox rows left for the drainer'),
    );
  }

  /**
   * Issues the publish of this process's own row and returns at once: the request that
   * committed it does not wait for Redis. The row is removed once the event has gone out; an
   * event Redis never acknowledged (held past what this process keeps, or the process ended)
   * keeps its row, which a drainer publishes after the grace period.
   */
  private deliver(id: string, event: BusEvent): void {
    const published = this.opts.bus.publish(event).then(
      () => {
        this.inFlight.delete(id);
        this.delivered.push(id);
        if (!this.removing) this.scheduleRemoval();
      },
      (err: unknown) => {
        this.inFlight.delete(id);
        this.opts.log.warn({ err, type: event.type }, 'event not published; left to the drainer');
      },
    );
    this.inFlight.set(id, published);
  }

  /** Waits until the delivered rows registered so far are removed. */
  private async removeDelivered(): Promise<void> {
    while (this.removing || this.delivered.length > 0) {
      if (!this.removing) this.scheduleRemoval();
      this.removeNow?.();
      await this.removing;
    }
  }

  /** One delete for every row delivered since the last one; the next waits for it. */
  private scheduleRemoval(): void {
    this.removing = new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, this.opts.removalDelayMs ?? 100);
      this.removeNow = () => {
        clearTimeout(timer);
        resolve();
      };
    })
      .then(async () => {
        this.removeNow = null;
        const ids = this.delivered.splice(0);
        if (ids.length > 0) await this.opts.db.transaction((tx) => deleteOutboxRows(tx.db, ids));
      })
      .catch((err: unknown) => {
        // The rows stay; a drainer publishes them again after the grace period.
        this.opts.log.warn({ err }, 'could not remove delivered outbox rows');
      })
      .finally(() => {
        this.removing = null;
        if (this.delivered.length > 0 && !this.closed) this.scheduleRemoval();
      });
  }

  private async drainAll(): Promise<number> {
    const { db, bus } = this.opts;
    let total = 0;
    for (;;) {
      // A process that cannot publish now (Redis away, or still publishing what it held) would
      // only hold what it claims: it leaves the rows to a drainer that can.
      if (this.closed || !bus.reachable()) break;
      const cutoff = Date.now() - this.graceMs;
      // An idle server pays one read per interval, outside any transaction.
      if (!(await hasDueOutboxRows(db.kysely, cutoff))) break;
      const now = Date.now();
      const claimed = await db.transaction((tx) =>
        claimOutboxRows(tx, cutoff, this.origin, now, CHUNK),
      );
      // This process's own rows whose publish is still under way are not published twice.
      const rows = claimed.filter((row) => !this.inFlight.has(row.id));
      // Rows taken over from their writer come after newer events of their topics: their
      // subscribers are told to resync once they have them (the signal follows on each topic).
      const late = [...new Set(rows.filter((row) => row.takenOver).map((row) => row.topic))];
      // Issued together, in order: one connection keeps Redis's order, and the in-process bus
      // delivers each at once. Should one fail, the batch stays claimed and is published again
      // after the grace period.
      const published = rows.map((row) => bus.publish(toBusEvent(row)));
      if (late.length > 0) published.push(bus.publishResync(late));
      const outcome = await Promise.race([
        Promise.all(published).then(() => 'published' as const),
        this.closing.then(() => 'closing' as const),
      ]);
      if (outcome === 'closing') break;
      for (const row of rows) this.delivered.push(row.id);
      total += rows.length;
      if (late.length > 0) {
        this.opts.log.warn(
          { events: rows.filter((row) => row.takenOver).length, topics: late.length },
          'published events their writer had not; their subscribers are told to resync',
        );
      }
      if (rows.length > 0) for (const listener of this.drainedListeners) listener();
      if (rows.length > 0) await this.removeDelivered();
      if (claimed.length < CHUNK) break;
    }
    if (total > 0) this.opts.log.debug({ events: total }, 'outbox rows delivered by the drainer');
    return total;
  }
}
