import type { Config } from '../../config/index.js';
import { rateLimited } from '../../errors.js';
import type { Clock } from '../../lib/clock.js';
import { TokenBucketLimiter } from '../../lib/token-bucket.js';

/**
 * Messages per user (contract: Request limits): SVC_RATE_MESSAGES_PER_MIN_PER_USER with a burst of
 * SVC_RATE_MESSAGES_BURST (default the same number), or during probation
 * SVC_RATE_PROBATION_MESSAGES_PER_MIN with a burst of the same size. Sends, replies, forwards and
 * encrypted messages all take from it. In memory per process, as the contract says.
 */
export class MessageRateLimiter {
  private readonly normal: TokenBucketLimiter | null;
  private readonly probation: TokenBucketLimiter | null;

  constructor(rates: Config['rates'], clock: Clock) {
    const now = () => clock.now().getTime();
    const perMin = rates.messagesPerMinPerUser;
    this.normal =
      perMin === null
        ? null
        : new TokenBucketLimiter({ perMinute: perMin, burst: rates.messagesBurst ?? perMin, now });
    const probation = rates.probationMessagesPerMin;
    this.probation =
      probation === null
        ? null
        : new TokenBucketLimiter({ perMinute: probation, burst: probation, now });
  }

  /** Spends one message of the account's allowance, or RATE_LIMITED with retryAfterSeconds. */
  take(accountId: string, onProbation: boolean): void {
    const limiter = onProbation && this.probation ? this.probation : this.normal;
    if (!limiter) return;
    const res = limiter.take(accountId);
    if (!res.ok) throw rateLimited(res.retryAfterSeconds, 'you are sending messages too fast');
  }
}
