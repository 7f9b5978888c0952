import type { Clock } from '../../lib/clock.js';

export interface ThrottleRule {
  /** Failures allowed within `windowMs` before further attempts are refused. */
  maxFailures: number;
  windowMs: number;
}

interface Window {
  startedAt: number;
  failures: number;
}

/**
 * Counts failed attempts per key in fixed windows: the first failure opens a window of
 * `windowMs`; once it holds `maxFailures`, attempts under that key are refused until the window
 * ends. Kept in memory per process (like the contract's request limits); bounded by `maxKeys`,
 * dropping the oldest window first.
 */
export class FailureThrottle {
  private readonly windows = new Map<string, Window>();

  constructor(
    private readonly rule: ThrottleRule,
    private readonly clock: Clock,
    private readonly maxKeys = 100_000,
  ) {}

  /** Seconds until `key` may try again, or 0 when it may try now. */
  retryAfterSeconds(key: string): number {
    const now = this.clock.now().getTime();
    const w = this.windows.get(key);
    if (!w) return 0;
    const endsAt = w.startedAt + this.rule.windowMs;
    if (endsAt <= now) {
      this.windows.delete(key);
      return 0;
    }
    if (w.failures < this.rule.maxFailures) return 0;
    return Math.max(1, Math.ceil((endsAt - now) / 1000));
  }

  recordFailure(key: string): void {
    const now = this.clock.now().getTime();
    const w = this.windows.get(key);
    if (w && w.startedAt + this.rule.windowMs > now) {
      w.failures += 1;
      return;
    }
    this.windows.delete(key);
    this.windows.set(key, { startedAt: now, failures: 1 });
    while (this.windows.size > this.maxKeys) {
      const oldest = this.windows.keys().next();
      if (oldest.done) break;
      this.windows.delete(oldest.value);
    }
  }

  reset(key: string): void {
    this.windows.delete(key);
  }
}

/** Failed sign-ins one account may take per window (docs/accounts.md, "Throttling"). */
export const ACCOUNT_LOGIN_RULE: ThrottleRule = { maxFailures: 10, windowMs: 15 * 60_000 };
/**
 * The operator's daily rule per account (SVC_RATE_LOGIN_FAILURES_PER_DAY_PER_ACCOUNT), against
 * slow credential stuffing spread over many addresses that stays under the 15-minute rules.
 */
export function dailyAccountRule(maxFailures: number): ThrottleRule {
  return { maxFailures, windowMs: 24 * 60 * 60_000 };
}

/** Failed sign-ins one client address (an IPv6 /64) may make per window, across accounts. */
export const ADDRESS_LOGIN_RULE: ThrottleRule = { maxFailures: 50, windowMs: 15 * 60_000 };
