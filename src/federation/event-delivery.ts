import { HOUR_MS, MINUTE_MS } from '../lib/clock.js';

import {
  deleteExpiredRelayEvents,
  discardRemoteEvents,
  dueEventDeliveries,
  ensureEventDelivery,
  hasPendingRemoteEvents,
  insertRemoteEvent,
  leaseEventDelivery,
  markRemoteEventsDelivered,
  overfullRemoteBacklogs,
  pendingRemoteEvents,
  releaseEventDelivery,
  remotePersonReachable,
  sweepRemoteEvents,
  trimRemoteBacklog,
  wakeEventDeliveries,
} from './queries.js';
import { UpstreamError } from './s2s-client.js';
import { FIRST_BACKOFF_MS, MAX_BACKOFF_MS, type S2sSenderDeps } from './s2s-outbox.js';

/** One event as it travels from a host to a relay (docs/federation.md, "Events"). */
export interface RelayedEvent {
  /** The same for every copy of one event, on every process of the host (event-bridge.ts). */
  id: string;
  type: string;
  at: number;
  payload: Record<string, unknown>;
}

/** A person of another server, as their events are addressed. */
export interface RemotePerson {
  accountId: string;
  /** Their relay's server id. */
  relay: string;
  /** Their username at the relay. */
  user: string;
}

/** Undelivered events recorded longer ago than this are dropped (the relay was down too long). */
export const EVENT_MAX_AGE_MS = 24 * HOUR_MS;
/** At most this many undelivered events are kept per person; older ones are dropped. */
export const EVENT_BACKLOG_PER_PERSON = 1_000;
/**
 * Delivered events stay recorded this long, so that a process that records an event after
 * another process delivered it finds it there and does not send it again.
 */
export const DELIVERED_KEEP_MS = 10 * MINUTE_MS;
/**
 * A relay remembers the events it published this long. It refuses events older than
 * EVENT_MAX_AGE_MS, so a copy always arrives while the first is remembered (with a day's margin
 * for clocks that disagree).
 */
export const RELAY_EVENT_MEMORY_MS = 2 * EVENT_MAX_AGE_MS;
/** Events per call to a relay (the relay's own limit). */
export const EVENTS_PER_CALL = 100;
/** How often the store's bounds are applied. */
const SWEEP_EVERY_MS = MINUTE_MS;
/** A relay's calls wake its postponed deliveries at most this often (per process). */
const WAKE_EVERY_MS = 10_000;

/**
 * Host side of `relayStream`'s delivery (docs/federation.md, "Events"): every event for a person
 * of another server is recorded in `remote_event` before it is sent, so a relay that is down or
 * a restart of this server loses nothing within the store's bounds. One process at a time sends
 * a person's events (a lease on their `remote_event_delivery` row), oldest first, up to
 * EVENTS_PER_CALL a call; the relay's answer marks them delivered, a failure postpones the
 * person with the outbox's backoff. An event recorded by several processes (each holding the
 * person's streams) is one row, so it is sent once; the relay drops any copy that still arrives
 * (a retry after an answer that was lost).
 */
export class EventDelivery {
  private timer: NodeJS.Timeout | null = null;
  private closed = false;
  private lastSweep = 0;
  /** People whose delivery row this process has made sure of. */
  private readonly known = new Set<string>();
  /** People this process is sending to now; `again` asks for one more round. */
  private readonly active = new Map<string, { again: boolean; done: Promise<number> }>();
  private readonly wokenAt = new Map<string, number>();
  private draining: Promise<number> | null = null;

  constructor(
    private readonly deps: S2sSenderDeps & {
      /** How long a process may hold a person's delivery (longer than a call may take). */
      leaseMs: number;
    },
  ) {}

  /** Told when a person may no longer get events (this process then closes their streams). */
  onUnreachable: (accountId: string) => void = () => {};

  start(): void {
    if (this.timer || this.closed) return;
    this.timer = setInterval(() => void this.drain(), this.deps.intervalMs ?? 2_000);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.draining;
    await Promise.all([...this.active.values()].map((a) => a.done));
  }

  /** Records an event for a person and sends it soon (unless another process records it too). */
  async record(person: RemotePerson, event: RelayedEvent): Promise<void> {
    if (this.closed) return;
    const { db, clock } = this.deps;
    const now = clock.now().getTime();
    if (!this.known.has(person.accountId)) {
      await ensureEventDelivery(db.kysely, {
        accountId: person.accountId,
        relay: person.relay,
        username: person.user,
        now,
      });
      this.known.add(person.accountId);
    }
    const fresh = await insertRemoteEvent(db.kysely, {
      accountId: person.accountId,
      eventId: event.id,
      body: JSON.stringify(event),
      createdAt: now,
    });
    if (fresh) void this.deliver(person.accountId);
  }

  /** Drops a person's undelivered events (blocked here, or no device left here). */
  async discard(accountId: string): Promise<void> {
    const dropped = await discardRemoteEvents(this.deps.db.kysely, accountId);
    if (dropped > 0) this.deps.log.info({ accountId, dropped }, 'remote events discarded');
  }

  /**
   * A verified call from `relay` shows it is up: the deliveries postponed while it was not are
   * due at once (as Matrix servers retry a destination that has just called them).
   */
  peerSeen(relay: string): void {
    const now = this.deps.clock.now().getTime();
    if (this.closed || now - (this.wokenAt.get(relay) ?? -Infinity) < WAKE_EVERY_MS) return;
    this.wokenAt.set(relay, now);
    if (this.wokenAt.size > 10_000) this.wokenAt.delete(this.wokenAt.keys().next().value!);
    wakeEventDeliveries(this.deps.db.kysely, relay, now)
      .then((woken) => {
        if (woken > 0) {
          this.deps.log.info({ relay, people: woken }, 'relay is back: postponed events due');
          void this.drain();
        }
      })
      .catch((err: unknown) => this.deps.log.warn({ err, relay }, 'could not wake deliveries'));
  }

  /**
   * Sends the events of every person whose delivery is due, and applies the store's bounds once
   * a minute. Answers how many events were delivered.
   */
  drain(): Promise<number> {
    this.draining ??= this.drainOnce().finally(() => {
      this.draining = null;
    });
    return this.draining;
  }

  /**
   * The store's bounds (docs/federation.md, "Events"): delivered events kept DELIVERED_KEEP_MS,
   * undelivered ones EVENT_MAX_AGE_MS and EVENT_BACKLOG_PER_PERSON per person; the relay side's
   * memory of published events RELAY_EVENT_MEMORY_MS. Answers how many undelivered were dropped.
   */
  async sweep(): Promise<number> {
    const { db, clock, log } = this.deps;
    const now = clock.now().getTime();
    this.lastSweep = now;
    let dropped = await sweepRemoteEvents(db.kysely, {
      deliveredBefore: now - DELIVERED_KEEP_MS,
      recordedBefore: now - EVENT_MAX_AGE_MS,
    });
    if (dropped > 0) log.warn({ dropped }, 'remote events dropped: not delivered within a day');
    for (const { accountId } of await overfullRemoteBacklogs(db.kysely, EVENT_BACKLOG_PER_PERSON)) {
      const trimmed = await trimRemoteBacklog(db.kysely, accountId, EVENT_BACKLOG_PER_PERSON);
      if (trimmed > 0) {
        log.warn({ accountId, dropped: trimmed }, 'remote events dropped: backlog full');
        dropped += trimmed;
      }
    }
    await deleteExpiredRelayEvents(db.kysely, now);
    return dropped;
  }

  private async drainOnce(): Promise<number> {
    const { db, clock, log } = this.deps;
    try {
      const now = clock.now().getTime();
      if (now - this.lastSweep >= SWEEP_EVERY_MS) await this.sweep();
      const due = await dueEventDeliveries(db.kysely, now, 100);
      const counts = await Promise.all(due.map((d) => this.deliver(d.accountId)));
      return counts.reduce((a, b) => a + b, 0);
    } catch (err) {
      log.error({ err }, 'remote event delivery failed');
      return 0;
    }
  }

  /**
   * Sends a person's undelivered events while there are any and the delivery is this process's
   * to make. A call for a person already being sent to asks that round to look once more.
   */
  private deliver(accountId: string): Promise<number> {
    const running = this.active.get(accountId);
    if (running) {
      running.again = true;
      return running.done;
    }
    const state = { again: false, done: Promise.resolve(0) };
    state.done = (async () => {
      let total = 0;
      try {
        do {
          state.again = false;
          total += await this.deliverRounds(accountId);
        } while (state.again && !this.closed);
      } catch (err) {
        this.deps.log.error({ err, accountId }, 'remote event delivery failed');
      } finally {
        this.active.delete(accountId);
      }
      return total;
    })();
    this.active.set(accountId, state);
    return state.done;
  }

  private async deliverRounds(accountId: string): Promise<number> {
    const { db, clock, log, client } = this.deps;
    let delivered = 0;
    while (!this.closed && (await hasPendingRemoteEvents(db.kysely, accountId))) {
      const now = clock.now().getTime();
      // Not due (backoff), or another process is sending: that one sends these too.
      const lease = await leaseEventDelivery(db.kysely, accountId, now, now + this.deps.leaseMs);
      if (!lease) break;
      // A block or a revocation made elsewhere (another process, the command line) is seen here:
      // the streams that recorded these events may belong to a process that did not hear of it.
      if (!(await remotePersonReachable(db.kysely, accountId))) {
        const dropped = await discardRemoteEvents(db.kysely, accountId);
        await releaseEventDelivery(db.kysely, accountId, {
          attempts: 0,
          nextAttemptAt: now,
          lastError: null,
        });
        log.info({ accountId, dropped }, 'remote events discarded: person blocked or revoked');
        this.onUnreachable(accountId);
        break;
      }
      const rows = await pendingRemoteEvents(db.kysely, accountId, EVENTS_PER_CALL);
      const body = `{"user":${JSON.stringify(lease.username)},"events":[${rows.map((r) => r.body).join(',')}]}`;
      let error: string | null = null;
      try {
        const answer = await client.call(lease.relay, {
          method: 'POST',
          path: 'events',
          headers: { 'content-type': 'application/json' },
          body: Buffer.from(body, 'utf8'),
        });
        if (answer.status < 200 || answer.status >= 300) error = `answered ${answer.status}`;
      } catch (err) {
        error = err instanceof UpstreamError ? err.message : String(err);
      }
      const at = clock.now().getTime();
      if (error === null) {
        await markRemoteEventsDelivered(
          db.kysely,
          accountId,
          rows.map((r) => r.seq),
          at,
        );
        await releaseEventDelivery(db.kysely, accountId, {
          attempts: 0,
          nextAttemptAt: at,
          lastError: null,
        });
        delivered += rows.length;
        continue;
      }
      const attempts = lease.attempts + 1;
      const wait = Math.min(FIRST_BACKOFF_MS * 2 ** (attempts - 1), MAX_BACKOFF_MS);
      await releaseEventDelivery(db.kysely, accountId, {
        attempts,
        nextAttemptAt: at + wait,
        lastError: error.slice(0, 500),
      });
      log.warn(
        { relay: lease.relay, accountId, events: rows.length, attempts, error },
        'remote events postponed',
      );
      break;
    }
    return delivered;
  }
}
