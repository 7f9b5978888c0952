import { performance } from 'node:perf_hooks';

/** The answer to one `take`. */
export type TakeResult = { ok: true } | { ok: false; retryAfterSeconds: number };

/** Options of a limiter; `now` is in milliseconds and only its differences matter. */
export interface TokenBucketOptions {
  perMinute: number;
  burst: number;
  now?: () => number;
  maxKeys?: number;
}

interface Bucket {
  tokens: number;
  updatedAt: number;
}

const MINUTE_MS = 60_000;
// Refill is float arithmetic; without slack a client that waits exactly the advertised
// Retry-After could find 0.9999999 tokens and be refused again.
const EPSILON = 1e-9;

/**
 * Token buckets per key, kept in memory: `burst` tokens at most, refilled continuously at
 * `perMinute` per minute. A missing bucket is a full one, so only keys that spent something are
 * stored, and a bucket idle long enough to have refilled is dropped. The Map is kept in order of
 * last use (a touched bucket is re-inserted at the end), so dropping idle buckets only looks at
 * its front, and past `maxKeys` the least recently used key is evicted: that key gets a fresh
 * burst, which under a flood of distinct keys is the price of bounded memory.
 */
export class TokenBucketLimiter {
  private readonly buckets = new Map<string, Bucket>();
  private readonly perMinute: number;
  private readonly burst: number;
  private readonly now: () => number;
  private readonly maxKeys: number;
  /** How long an empty bucket takes to fill; a bucket untouched that long is full. */
  private readonly fillMs: number;

  constructor(opts: TokenBucketOptions) {
    const { perMinute, burst, maxKeys = 100_000 } = opts;
    if (!(Number.isFinite(perMinute) && perMinute > 0)) {
      throw new RangeError(`perMinute must be a positive number, got ${perMinute}`);
    }
    if (!(Number.isFinite(burst) && burst >= 1)) {
      throw new RangeError(`burst must be a number of at least 1, got ${burst}`);
    }
    if (!(Number.isInteger(maxKeys) && maxKeys >= 1)) {
      throw new RangeError(`maxKeys must be a positive integer, got ${maxKeys}`);
    }
    this.perMinute = perMinute;
    this.burst = burst;
    this.maxKeys = maxKeys;
    // Monotonic by default, so a wall-clock step neither refills nor freezes every bucket.
    this.now = opts.now ?? (() => performance.now());
    this.fillMs = (burst * MINUTE_MS) / perMinute;
  }

  /** Keys currently held (for metrics and tests). */
  get size(): number {
    return this.buckets.size;
  }

  /**
   * Spends `cost` tokens of `key` if it has them. A refusal spends nothing and says, rounded up
   * and at least 1, how many seconds until the tokens are there. A cost above the burst can never
   * pass; it is refused with the time until the bucket is full, the nearest thing to an honest
   * answer, and callers should treat it as a request too large to serve at all.
   */
  take(key: string, cost = 1): TakeResult {
    if (!(Number.isFinite(cost) && cost >= 0)) {
      throw new RangeError(`cost must be a non-negative number, got ${cost}`);
    }
    const now = this.now();
    this.dropIdle(now);
    const tokens = this.tokensAt(key, now);
    if (cost > this.burst) return this.refuse(this.burst - tokens);
    if (tokens + EPSILON < cost) {
      // Nothing is stored on refusal: the bucket's state at `now` follows from the stored one.
      return this.refuse(cost - tokens);
    }
    this.store(key, Math.max(0, tokens - cost), now);
    return { ok: true };
  }

  /** Forgets one key, or every key: the next take finds a full bucket. */
  reset(key?: string): void {
    if (key === undefined) this.buckets.clear();
    else this.buckets.delete(key);
  }

  private tokensAt(key: string, now: number): number {
    const bucket = this.buckets.get(key);
    if (!bucket) return this.burst;
    // A clock that steps back refills nothing rather than refilling twice later.
    const elapsed = Math.max(0, now - bucket.updatedAt);
    return Math.min(this.burst, bucket.tokens + (elapsed * this.perMinute) / MINUTE_MS);
  }

  private refuse(missing: number): TakeResult {
    const seconds = (missing * 60) / this.perMinute;
    return { ok: false, retryAfterSeconds: Math.max(1, Math.ceil(seconds - EPSILON)) };
  }

  private store(key: string, tokens: number, now: number): void {
    const previous = this.buckets.get(key);
    this.buckets.delete(key);
    if (tokens + EPSILON >= this.burst) return;
    this.buckets.set(key, { tokens, updatedAt: Math.max(now, previous?.updatedAt ?? now) });
    while (this.buckets.size > this.maxKeys) {
      const oldest = this.buckets.keys().next();
      if (oldest.done) break;
      this.buckets.delete(oldest.value);
    }
  }

  /** Drops buckets at the front (least recently used) that have refilled by now. */
  private dropIdle(now: number): void {
    for (const [key, bucket] of this.buckets) {
      if (now - bucket.updatedAt < this.fillMs) return;
      this.buckets.delete(key);
    }
  }
}
