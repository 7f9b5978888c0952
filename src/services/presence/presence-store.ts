import type { ChainableCommander, Redis } from 'ioredis';

export type PresenceStatus = 'online' | 'away' | 'offline';

/** How long the last activity and the last announced status are kept in Redis. */
const KEPT_MS = 7 * 86_400_000;

/**
 * Where presence facts live: in this process alone, or in Redis so every process sees the
 * connections and activity of the others. Nothing here is durable; a restart of everything
 * starts everyone offline.
 */
export interface PresenceStore {
  /** This process holds no connection of the account any more. */
  release(accountId: string): Promise<void>;
  /** Keeps this process's holds alive (Redis entries expire if a process dies). */
  refresh(accountIds: readonly string[]): Promise<void>;
  /** Whether any process holds a connection of the account. */
  isConnected(accountId: string): Promise<boolean>;
  touch(accountId: string, at: number): Promise<void>;
  lastActive(accountId: string): Promise<number | null>;
  /**
   * A first connection of the account opened on this process: records that this process holds
   * one (kept by `refresh`), `touch`es at `at` and `swapAnnounced`s to `status`, at once (with
   * Redis, in one round trip). Answers the status announced before (null: none).
   */
  arrive(accountId: string, at: number, status: PresenceStatus): Promise<PresenceStatus | null>;
  /** Records the status last announced for the account; answers the one before (null: none). */
  swapAnnounced(accountId: string, status: PresenceStatus): Promise<PresenceStatus | null>;
  announced(accountIds: readonly string[]): Promise<Map<string, PresenceStatus>>;
  /**
   * Accounts shown online or away that no process holds any more (their process died or shut
   * down). At most one process gets a non-empty answer per `intervalMs`.
   */
  orphans(limit: number, intervalMs: number): Promise<string[]>;
}

/** One process: the counts of the connections are the truth. */
export class MemoryPresenceStore implements PresenceStore {
  private readonly held = new Set<string>();
  private readonly active = new Map<string, number>();
  private readonly shown = new Map<string, PresenceStatus>();

  async release(accountId: string): Promise<void> {
    this.held.delete(accountId);
    this.active.delete(accountId);
  }
  async refresh(): Promise<void> {}
  async isConnected(accountId: string): Promise<boolean> {
    return this.held.has(accountId);
  }
  async touch(accountId: string, at: number): Promise<void> {
    this.active.set(accountId, at);
  }
  async lastActive(accountId: string): Promise<number | null> {
    return this.active.get(accountId) ?? null;
  }
  async arrive(
    accountId: string,
    at: number,
    status: PresenceStatus,
  ): Promise<PresenceStatus | null> {
    this.held.add(accountId);
    this.active.set(accountId, at);
    return this.swapAnnounced(accountId, status);
  }
  async swapAnnounced(accountId: string, status: PresenceStatus): Promise<PresenceStatus | null> {
    const before = this.shown.get(accountId) ?? null;
    // Offline is the default: forget the account rather than remember it offline.
    if (status === 'offline') this.shown.delete(accountId);
    else this.shown.set(accountId, status);
    return before;
  }
  async announced(accountIds: readonly string[]): Promise<Map<string, PresenceStatus>> {
    const out = new Map<string, PresenceStatus>();
    for (const id of accountIds) out.set(id, this.shown.get(id) ?? 'offline');
    return out;
  }
  async orphans(): Promise<string[]> {
    // One process: a user it does not hold has had the grace period and was announced offline.
    return [];
  }
}

/**
 * Several processes (SVC_REDIS_URL). Per account:
 * - `<prefix>presence:conn:<id>`: a sorted set of the processes holding a connection, each
 *   scored with the time its hold expires; a process refreshes its holds every heartbeat, so a
 *   process that dies stops counting after `holdTtlMs`.
 * - `<prefix>presence:active:<id>`: the time of the last activity seen by any process.
 * - `<prefix>presence:shown:<id>`: the status last announced, swapped atomically (SET ... GET)
 *   so two processes never announce the same change twice.
 */
export class RedisPresenceStore implements PresenceStore {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly processId: string,
    private readonly holdTtlMs: number,
  ) {}

  private key(kind: 'conn' | 'active' | 'shown', accountId: string): string {
    return `${this.prefix}presence:${kind}:${accountId}`;
  }

  /** Accounts announced online or away, scored by when. */
  private get visibleSet(): string {
    return `${this.prefix}presence:visible`;
  }

  async release(accountId: string): Promise<void> {
    await this.redis.zrem(this.key('conn', accountId), this.processId);
  }

  async refresh(accountIds: readonly string[]): Promise<void> {
    if (accountIds.length === 0) return;
    const pipeline = this.redis.pipeline();
    for (const id of accountIds) this.holdIn(pipeline, id);
    await run(pipeline);
  }

  private holdIn(pipeline: ChainableCommander, accountId: string): void {
    // Scores use the wall clock: every process compares them with its own.
    const key = this.key('conn', accountId);
    pipeline.zadd(key, Date.now() + this.holdTtlMs, this.processId);
    pipeline.pexpire(key, this.holdTtlMs * 2);
  }

  async isConnected(accountId: string): Promise<boolean> {
    const count = await this.redis.zcount(this.key('conn', accountId), Date.now(), '+inf');
    return count > 0;
  }

  async touch(accountId: string, at: number): Promise<void> {
    await this.redis.set(this.key('active', accountId), String(at), 'PX', KEPT_MS);
  }

  async lastActive(accountId: string): Promise<number | null> {
    const value = await this.redis.get(this.key('active', accountId));
    return value === null ? null : Number(value);
  }

  async arrive(
    accountId: string,
    at: number,
    status: PresenceStatus,
  ): Promise<PresenceStatus | null> {
    const pipeline = this.redis.pipeline();
    this.holdIn(pipeline, accountId);
    pipeline.set(this.key('active', accountId), String(at), 'PX', KEPT_MS);
    this.swapIn(pipeline, accountId, status);
    // Replies: the hold's two, the activity's, then the swap's (the status before).
    const replies = await run(pipeline);
    return (replies[3] as PresenceStatus | null) ?? null;
  }

  async swapAnnounced(accountId: string, status: PresenceStatus): Promise<PresenceStatus | null> {
    const pipeline = this.redis.pipeline();
    this.swapIn(pipeline, accountId, status);
    const [before] = await run(pipeline);
    return (before as PresenceStatus | null) ?? null;
  }

  /** The swap (its reply: the status before) and then the visible set's update. */
  private swapIn(pipeline: ChainableCommander, accountId: string, status: PresenceStatus): void {
    pipeline.set(this.key('shown', accountId), status, 'PX', KEPT_MS, 'GET');
    if (status === 'offline') pipeline.zrem(this.visibleSet, accountId);
    else pipeline.zadd(this.visibleSet, Date.now(), accountId);
  }

  async announced(accountIds: readonly string[]): Promise<Map<string, PresenceStatus>> {
    const out = new Map<string, PresenceStatus>();
    if (accountIds.length === 0) return out;
    const values = await this.redis.mget(accountIds.map((id) => this.key('shown', id)));
    accountIds.forEach((id, i) => out.set(id, (values[i] as PresenceStatus | null) ?? 'offline'));
    return out;
  }

  async orphans(limit: number, intervalMs: number): Promise<string[]> {
    const turn = await this.redis.set(
      `${this.prefix}presence:reaper`,
      this.processId,
      'PX',
      intervalMs,
      'NX',
    );
    if (turn !== 'OK') return [];
    // A random sample each time, so users legitimately online never hide the orphans.
    const shown = (await this.redis.zrandmember(this.visibleSet, limit)) as string[];
    if (shown.length === 0) return [];
    const pipeline = this.redis.pipeline();
    const now = Date.now();
    for (const id of shown) pipeline.zcount(this.key('conn', id), now, '+inf');
    const counts = (await pipeline.exec()) ?? [];
    return shown.filter((_, i) => Number(counts[i]?.[1] ?? 0) === 0);
  }
}

/** Sends a pipeline (one round trip) and answers its replies; the first failed command throws. */
async function run(pipeline: ChainableCommander): Promise<unknown[]> {
  const results = (await pipeline.exec()) ?? [];
  return results.map(([err, reply]) => {
    if (err) throw err;
    return reply;
  });
}
