import type { Tx } from '../db/transaction.js';
import { Lru } from '../lib/lru.js';

import type { BusEvent, EventBus } from './bus.js';
import type { EventPort } from './port.js';

export interface SharedCacheOptions {
  /** Names the cache's bus topic, `cache:<name>`. */
  name: string;
  /** Most keys held (least recently used dropped first). */
  max: number;
  /**
   * Longest an entry is served, however quiet the bus: a bound on staleness should an
   * invalidation be lost (default 60 s).
   */
  ttlMs?: number;
  now?: () => number;
  /**
   * Where `invalidateOnCommit` writes its drop (the outbox), so the command line's changes reach
   * the servers; without it (a bare bus in a unit test) the drop is published after the commit.
   */
  events?: EventPort;
}

interface Entry<V> {
  value: V;
  until: number;
}

/**
 * A per-process cache of a read that changes rarely and is made on hot paths (docs/durability.md,
 * "Cached reads"). Whoever changes the data calls `invalidateOnCommit` in the changing
 * transaction: after the commit this process drops the key at once, and every other process drops
 * it when the `cache:<name>` bus event reaches it (milliseconds on Redis). A load that was under
 * way when a key was invalidated is not kept, so a read that raced a change never outlives it.
 * Entries also expire after `ttlMs`, and on Redis every cache is emptied when the subscriber
 * connection comes back (invalidations may have been missed meanwhile).
 */
export class SharedCache<V> {
  private readonly entries: Lru<string, Entry<V>>;
  private readonly topic: string;
  private readonly ttlMs: number;
  private readonly now: () => number;
  private readonly events: EventPort | undefined;
  /** Bumped by every invalidation: a load started under an older generation is not kept. */
  private generation = 0;

  constructor(
    private readonly bus: EventBus,
    opts: SharedCacheOptions,
  ) {
    this.entries = new Lru(opts.max);
    this.topic = `cache:${opts.name}`;
    this.ttlMs = opts.ttlMs ?? 60_000;
    this.now = opts.now ?? Date.now;
    this.events = opts.events;
    bus.subscribe(this.topic, (event) => {
      const key = event.payload['key'];
      if (typeof key === 'string') this.drop(key);
      else this.clear();
    });
    // Invalidations may have been missed (a Redis outage) or come late (a drainer).
    bus.onResync((topics) => {
      if (topics === null || topics.includes(this.topic)) this.clear();
    });
  }

  /** The cached value of `key`, or `load()`'s, kept for the next callers. */
  async get(key: string, load: () => Promise<V>): Promise<V> {
    const hit = this.entries.get(key);
    if (hit && hit.until > this.now()) return hit.value;
    const generation = this.generation;
    const value = await load();
    if (generation === this.generation) {
      this.entries.set(key, { value, until: this.now() + this.ttlMs });
    }
    return value;
  }

  /**
   * The cached values of `keys`, and `load(missing)`'s for the others, kept for the next
   * callers. A key `load` leaves out is answered absent and not kept.
   */
  async getMany(keys: readonly string[], load: (missing: string[]) => Promise<Map<string, V>>) {
    const found = new Map<string, V>();
    const missing: string[] = [];
    const now = this.now();
    for (const key of new Set(keys)) {
      const hit = this.entries.get(key);
      if (hit && hit.until > now) found.set(key, hit.value);
      else missing.push(key);
    }
    if (missing.length === 0) return found;
    const generation = this.generation;
    const loaded = await load(missing);
    const keep = generation === this.generation;
    const until = this.now() + this.ttlMs;
    for (const [key, value] of loaded) {
      found.set(key, value);
      if (keep) this.entries.set(key, { value, until });
    }
    return found;
  }

  /**
   * Drops `key` (every key when omitted) here once `tx` commits, and on every other process
   * through the event outbox: a change made by the command line reaches the servers too (their
   * drainer publishes it).
   */
  invalidateOnCommit(tx: Tx, key?: string): void {
    const outbox = this.events;
    if (!outbox) {
      tx.onCommit(() => this.invalidate(key));
      return;
    }
    tx.onCommit(() => (key === undefined ? this.clear() : this.drop(key)));
    outbox.publishOnCommit(tx, this.event(key));
  }

  /**
   * Drops `key` (every key when omitted) here now and on every other process soon after; the
   * caller does not wait for the others (nor for Redis).
   */
  invalidate(key?: string): void {
    if (key === undefined) this.clear();
    else this.drop(key);
    void this.bus.publish(this.event(key));
  }

  private event(key: string | undefined): BusEvent {
    return {
      topic: this.topic,
      type: 'CacheInvalidated',
      at: this.now(),
      payload: key === undefined ? {} : { key },
    };
  }

  private drop(key: string): void {
    this.generation++;
    this.entries.delete(key);
  }

  private clear(): void {
    this.generation++;
    this.entries.clear();
  }
}
