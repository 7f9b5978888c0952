import type { Redis } from 'ioredis';
import type { Logger } from 'pino';

import { actingAccountId, type Actor } from '../../auth/actor.js';
import type { Db } from '../../db/database.js';
import { DIRECT_SPACE_ID } from '../../db/direct-space.js';
import type { EventBus } from '../../events/bus.js';
import { userTopic, workspaceTopic, type EventPayload } from '../../events/catalog.js';
import { validation } from '../../errors.js';
import type { Clock } from '../../lib/clock.js';
import { isId, newId } from '../../lib/ids.js';
import { sharingWith } from '../conversations/index.js';

import {
  MemoryPresenceStore,
  RedisPresenceStore,
  type PresenceStatus,
  type PresenceStore,
} from './presence-store.js';
import {
  findPresenceArrival,
  findPresenceAudience,
  findPresenceChoices,
  upsertPresenceChoice,
  type PresenceAudience,
} from './queries.js';

export type { PresenceStatus } from './presence-store.js';

/** What a user chose to show: `auto` (the default), always `away`, or `invisible` (offline). */
export type PresenceChoice = 'auto' | 'away' | 'invisible';
export const PRESENCE_CHOICES: readonly PresenceChoice[] = ['auto', 'away', 'invisible'];

export interface PresenceTimings {
  /** With the `auto` choice, a connected user with no activity this long is shown away. */
  awayAfterMs: number;
  /** A user whose last connection closed is shown offline only if none reopens this soon. */
  offlineGraceMs: number;
  /** How often idle users are checked (for away) and Redis holds are refreshed. */
  sweepMs: number;
  /** How long changes gather per workspace before one `PresencesChanged` carries them all. */
  batchMs: number;
}

export const PRESENCE_DEFAULTS: PresenceTimings = {
  awayAfterMs: 10 * 60_000,
  offlineGraceMs: 15_000,
  sweepMs: 30_000,
  batchMs: 250,
};

/** Users shown online whose process is gone, checked per sweep (by one process). */
const ORPHANS_PER_SWEEP = 500;

/** Most users one `presence` query answers for. */
export const PRESENCE_QUERY_MAX = 200;

export interface PresenceDeps {
  db: Db;
  bus: EventBus;
  clock: Clock;
  log: Logger;
  /** Redis (shared with the bus) when several processes serve; null for one process. */
  redis: Redis | null;
  redisPrefix: string;
  timings?: Partial<PresenceTimings>;
}

/**
 * Online, away or offline, across every process.
 *
 * - **Online** while the user holds at least one WebSocket connection on any process, **away**
 *   after `awayAfterMs` without activity (connecting, subscribing, typing, `setPresence`) or by
 *   choice, **offline** otherwise or when they chose to be invisible.
 * - Changes are debounced: a closed last connection shows offline only after `offlineGraceMs`
 *   without a new one, so a reconnect never flaps.
 * - Each change is announced once (the last announced status is swapped atomically): on the
 *   topic of every workspace the user is in, gathered for `batchMs` into one `PresencesChanged`
 *   per workspace (a storm of N sign-ins is a few events to each member, not N: the deliveries
 *   grow with the members times the batches, not with the members squared); and as
 *   `PresenceChanged` on the own topics of the people they share a direct or group conversation
 *   with (and their own).
 */
export class PresenceService {
  private readonly store: PresenceStore;
  private readonly timings: PresenceTimings;
  /** Connections this process holds per account. */
  private readonly local = new Map<string, number>();
  /** Last activity this process saw, and the status it last worked out, per connected account. */
  private readonly seen = new Map<string, { activeAt: number; status: PresenceStatus | null }>();
  private readonly offlineTimers = new Map<string, NodeJS.Timeout>();
  private readonly chains = new Map<string, Promise<void>>();
  private sweepTimer: NodeJS.Timeout | null = null;
  /** Changes waiting for the next `PresencesChanged`, per workspace, the last one per user. */
  private readonly batches = new Map<string, Map<string, PresenceStatus>>();
  private batchTimer: NodeJS.Timeout | null = null;

  constructor(private readonly deps: PresenceDeps) {
    this.timings = { ...PRESENCE_DEFAULTS, ...deps.timings };
    this.store = deps.redis
      ? new RedisPresenceStore(
          deps.redis,
          deps.redisPrefix,
          `${newId()}`,
          Math.max(3 * this.timings.sweepMs, 10_000),
        )
      : new MemoryPresenceStore();
  }

  /** Starts the idle sweep and the Redis heartbeat (the server does; the CLI does not). */
  start(): void {
    if (this.sweepTimer) return;
    this.sweepTimer = setInterval(() => void this.sweep(), this.timings.sweepMs);
    this.sweepTimer.unref();
  }

  /**
   * Stops the timers. The holds of this process are released, so another process's sweep
   * announces its users offline unless they reconnected elsewhere (not at once: a rolling
   * restart should not flap).
   */
  async stop(): Promise<void> {
    if (this.sweepTimer) clearInterval(this.sweepTimer);
    this.sweepTimer = null;
    for (const t of this.offlineTimers.values()) clearTimeout(t);
    this.offlineTimers.clear();
    await Promise.allSettled([...this.chains.values()]);
    await this.flushBatches();
    const held = [...this.local.keys()];
    this.local.clear();
    await Promise.allSettled(held.map((id) => this.store.release(id)));
  }

  /** True when no change is pending (no grace period running, nothing being announced). */
  settled(): boolean {
    return this.offlineTimers.size === 0 && this.chains.size === 0 && this.batches.size === 0;
  }

  private now(): number {
    return this.deps.clock.now().getTime();
  }

  /** A WebSocket connection of the account opened on this process. */
  connected(accountId: string): void {
    const count = (this.local.get(accountId) ?? 0) + 1;
    this.local.set(accountId, count);
    const timer = this.offlineTimers.get(accountId);
    if (timer) {
      clearTimeout(timer);
      this.offlineTimers.delete(accountId);
    }
    if (count === 1) {
      this.seen.set(accountId, { activeAt: this.now(), status: null });
      this.enqueue(accountId, () => this.arrive(accountId));
    }
  }

  /**
   * The account's first connection on this process: held, active now, so its status follows
   * from its choice alone; the choice and the audience are read in one statement, the facts
   * written and the status swapped in one round trip to Redis.
   */
  private async arrive(accountId: string): Promise<void> {
    // Closed again before its turn came: nothing to hold, the shared facts decide.
    if (!this.local.has(accountId)) return this.evaluate(accountId);
    const { choice, audience } = await findPresenceArrival(this.deps.db.kysely, accountId);
    const status: PresenceStatus =
      choice === 'invisible' ? 'offline' : choice === 'away' ? 'away' : 'online';
    const seen = this.seen.get(accountId);
    if (seen) seen.status = status;
    const before = await this.store.arrive(accountId, this.now(), status);
    if (changed(before, status)) await this.announce(accountId, status, audience);
  }

  /** A WebSocket connection of the account closed on this process. */
  disconnected(accountId: string): void {
    const count = (this.local.get(accountId) ?? 1) - 1;
    if (count > 0) {
      this.local.set(accountId, count);
      return;
    }
    this.local.delete(accountId);
    this.seen.delete(accountId);
    this.enqueue(accountId, () => this.store.release(accountId));
    const timer = setTimeout(() => {
      this.offlineTimers.delete(accountId);
      if (this.local.has(accountId)) return;
      this.enqueue(accountId, () => this.evaluate(accountId));
    }, this.timings.offlineGraceMs);
    timer.unref();
    this.offlineTimers.set(accountId, timer);
  }

  /** Activity of a connected user: an away user (by idleness) is online again at once. */
  touch(accountId: string): void {
    const seen = this.seen.get(accountId);
    if (!seen) return;
    const now = this.now();
    // Shared activity is written at most once per sweep interval per process.
    const stale = now - seen.activeAt >= this.timings.sweepMs;
    seen.activeAt = now;
    if (seen.status === 'away' || stale) {
      this.enqueue(accountId, async () => {
        await this.store.touch(accountId, now);
        if (seen.status !== 'online') await this.evaluate(accountId);
      });
    }
  }

  /** Sets what the caller shows; counts as activity. */
  async setChoice(actor: Actor, choice: PresenceChoice): Promise<void> {
    const accountId = actingAccountId(actor);
    if (!PRESENCE_CHOICES.includes(choice)) throw validation('unknown presence choice');
    await upsertPresenceChoice(this.deps.db.kysely, {
      accountId,
      choice,
      updatedAt: this.now(),
    });
    const seen = this.seen.get(accountId);
    if (seen) seen.activeAt = this.now();
    await this.enqueue(accountId, async () => {
      if (this.local.has(accountId)) await this.store.touch(accountId, this.now());
      await this.evaluate(accountId);
    });
  }

  /** The actor's own choice and the status others see of them. */
  async mine(actor: Actor): Promise<{ choice: PresenceChoice; status: PresenceStatus }> {
    const accountId = actingAccountId(actor);
    const [choice, [shown]] = await Promise.all([
      this.choiceOf(accountId),
      this.presenceOf(actor, [accountId]),
    ]);
    return { choice, status: shown?.status ?? 'offline' };
  }

  private async choiceOf(accountId: string): Promise<PresenceChoice> {
    const [row] = await findPresenceChoices(this.deps.db.kysely, [accountId]);
    return (row?.choice as PresenceChoice | undefined) ?? 'auto';
  }

  /**
   * The status others see of each user, in the order asked. Users who share no workspace or
   * conversation with the viewer are shown offline, whatever they are.
   */
  async presenceOf(
    actor: Actor,
    userIds: readonly string[],
  ): Promise<Array<{ userId: string; status: PresenceStatus }>> {
    const viewerId = actingAccountId(actor);
    if (userIds.length > PRESENCE_QUERY_MAX) {
      throw validation(`ask for at most ${PRESENCE_QUERY_MAX} users at once`);
    }
    const ids = [...new Set(userIds.filter((id) => isId(id)))];
    const others = ids.filter((id) => id !== viewerId);
    const sharing = await sharingWith(this.deps.db.kysely, viewerId, others);
    const visible = ids.filter((id) => id === viewerId || sharing.has(id));
    const shown = await this.store.announced(visible);
    return userIds.map((userId) => ({ userId, status: shown.get(userId) ?? 'offline' }));
  }

  /** Whether the account holds an open connection on any process (Web Push, digests). */
  async isConnected(accountId: string): Promise<boolean> {
    return this.local.has(accountId) || (await this.store.isConnected(accountId));
  }

  /** Which of the accounts others see online now (`@here`); no visibility check. */
  async onlineAmong(accountIds: readonly string[]): Promise<Set<string>> {
    const shown = await this.store.announced(accountIds);
    return new Set(accountIds.filter((id) => shown.get(id) === 'online'));
  }

  /** What the status of a user is now, from the shared facts and their choice. */
  private async compute(accountId: string): Promise<PresenceStatus> {
    if (!this.local.has(accountId) && !(await this.store.isConnected(accountId))) return 'offline';
    const choice = await this.choiceOf(accountId);
    if (choice === 'invisible') return 'offline';
    if (choice === 'away') return 'away';
    const seen = this.seen.get(accountId);
    const last = (await this.store.lastActive(accountId)) ?? seen?.activeAt;
    // Activity another process saw counts here too, so the sweep does not ask again.
    if (seen && last !== undefined && last > seen.activeAt) seen.activeAt = last;
    return last !== undefined && this.now() - last >= this.timings.awayAfterMs ? 'away' : 'online';
  }

  /** Works the status out again and announces it if it changed (once across processes). */
  private async evaluate(accountId: string): Promise<void> {
    const status = await this.compute(accountId);
    const seen = this.seen.get(accountId);
    if (seen) seen.status = status;
    const before = await this.store.swapAnnounced(accountId, status);
    if (!changed(before, status)) return;
    await this.announce(accountId, status);
  }

  private async announce(
    accountId: string,
    status: PresenceStatus,
    audience?: PresenceAudience,
  ): Promise<void> {
    const { workspaceIds, partners } =
      audience ?? (await findPresenceAudience(this.deps.db.kysely, accountId));
    for (const id of workspaceIds) {
      let batch = this.batches.get(id);
      if (!batch) this.batches.set(id, (batch = new Map()));
      batch.set(accountId, status);
    }
    if (this.batches.size > 0 && !this.batchTimer) {
      this.batchTimer = setTimeout(() => void this.flushBatches(), this.timings.batchMs);
    }
    // People met in direct and group conversations (and the user's own other devices) hear it
    // on their own topics, like every event of the direct space.
    const at = this.now();
    const body = { userId: accountId, status: status.toUpperCase() };
    // Not waited for: presence is at most once, and nothing waits for Redis.
    for (const id of [accountId, ...partners]) {
      void this.deps.bus.publish({
        topic: userTopic(id),
        type: 'PresenceChanged',
        at,
        payload: { audience: { kind: 'users', userIds: [id] }, serverId: DIRECT_SPACE_ID, ...body },
      });
    }
  }

  /** Publishes the gathered changes: one `PresencesChanged` per workspace. */
  private async flushBatches(): Promise<void> {
    if (this.batchTimer) clearTimeout(this.batchTimer);
    this.batchTimer = null;
    const batches = [...this.batches];
    this.batches.clear();
    const at = this.now();
    for (const [workspaceId, changes] of batches) {
      const payload: EventPayload = {
        audience: { kind: 'workspace' },
        serverId: workspaceId,
        changes: [...changes].map(([userId, status]) => ({ userId, status: status.toUpperCase() })),
      };
      this.deps.bus
        .publish({ topic: workspaceTopic(workspaceId), type: 'PresencesChanged', at, payload })
        .catch((err: unknown) =>
          this.deps.log.warn({ err, workspaceId }, 'presence announcement failed'),
        );
    }
  }

  /** Idle users turn away; Redis holds of connected users are refreshed. */
  private async sweep(): Promise<void> {
    const now = this.now();
    const connected = [...this.local.keys()];
    try {
      await this.store.refresh(connected);
    } catch (err) {
      this.deps.log.warn({ err }, 'presence heartbeat failed');
    }
    for (const accountId of connected) {
      const seen = this.seen.get(accountId);
      if (seen?.status === 'online' && now - seen.activeAt >= this.timings.awayAfterMs) {
        this.enqueue(accountId, () => this.evaluate(accountId));
      }
    }
    // Users of a process that died (or stopped) stay shown until someone looks: one process
    // per interval checks a batch of them.
    try {
      const orphans = await this.store.orphans(ORPHANS_PER_SWEEP, this.timings.sweepMs);
      for (const accountId of orphans) {
        if (!this.local.has(accountId) && !this.offlineTimers.has(accountId)) {
          this.enqueue(accountId, () => this.evaluate(accountId));
        }
      }
    } catch (err) {
      this.deps.log.warn({ err }, 'presence orphan check failed');
    }
  }

  /** Runs presence work of one account in order; failures are logged, never thrown at callers. */
  private enqueue(accountId: string, work: () => Promise<void>): Promise<void> {
    const previous = this.chains.get(accountId) ?? Promise.resolve();
    const next = previous
      .then(work)
      .catch((err: unknown) => this.deps.log.warn({ err, accountId }, 'presence update failed'));
    this.chains.set(accountId, next);
    void next.finally(() => {
      if (this.chains.get(accountId) === next) this.chains.delete(accountId);
    });
    return next;
  }
}

/** Whether a swap from `before` to `now` is news (nobody is told of an offline never shown). */
function changed(before: PresenceStatus | null, now: PresenceStatus): boolean {
  return before !== now && !(before === null && now === 'offline');
}
