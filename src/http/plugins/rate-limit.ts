import type { FastifyInstance } from 'fastify';

import type { Config } from '../../config/index.js';
import { CidrSet, normalizeCidr, rateLimitKey } from '../../lib/address.js';
import { TokenBucketLimiter } from '../../lib/token-bucket.js';

import { isApiPath } from './origin.js';

/**
 * SVC_RATE_REQUESTS_PER_MIN_PER_IP: a token bucket per client address (IPv6 per /64) over
 * routes under /api, with a burst of the same size. Kept in memory per process. Addresses in
 * SVC_RATE_EXEMPT_ADDRESSES are not counted.
 */
export function registerAddressRateLimit(
  app: FastifyInstance,
  config: Config,
): TokenBucketLimiter | null {
  const perMinute = config.rates.requestsPerMinPerIp;
  if (perMinute === null) return null;
  const limiter = new TokenBucketLimiter({ perMinute, burst: perMinute });
  const exempt = new CidrSet(
    config.rates.exemptAddresses.map((a) => normalizeCidr(a)?.cidr).filter((c): c is string => !!c),
  );
  app.addHook('onRequest', async (request, reply) => {
    if (!isApiPath(request.url)) return;
    if (exempt.has(request.svc.clientAddress)) return;
    const result = limiter.take(rateLimitKey(request.svc.clientAddress));
    if (!result.ok) {
      reply.header('retry-after', String(result.retryAfterSeconds));
      return reply
        .code(429)
        .send({ error: 'rate_limited', retryAfterSeconds: result.retryAfterSeconds });
    }
  });
  return limiter;
}
