import type { FastifyInstance } from 'fastify';

import type { Config } from '../../config/index.js';
import { buildOriginPolicy, originAllowed } from '../origins.js';

import { requestOrigin } from './request-context.js';

const ALLOWED_HEADERS = 'Content-Type, Authorization, X-CSRF-Token, X-Request-Id';

/** Whether a path is under /api (the origin check and the per-address limit apply there). */
export const isApiPath = (url: string): boolean =>
  url === '/api' || url.startsWith('/api/') || url.startsWith('/api?');

/**
 * Origins (contract "Origins"): requests without Origin pass; under /api an Origin that is not
 * allowed is refused with 400; allowed cross-origin callers get credentialed CORS headers.
 * Probes, discovery and /s2s are outside the check.
 */
export function registerOriginCheck(app: FastifyInstance, config: Config): void {
  const policy = buildOriginPolicy(config.server.publicBaseUrl, config.http.corsAllowedOrigin);
  app.addHook('onRequest', async (request, reply) => {
    if (!isApiPath(request.url)) return;
    const origin = request.headers.origin;
    if (origin === undefined) return;
    const own = requestOrigin(
      request.headers,
      request.svc.protocol,
      config.http.trustForwardedHeaders,
    );
    if (!originAllowed(policy, origin, own)) {
      return reply.code(400).send({
        error: 'origin_not_allowed',
        message: `requests from origin ${origin} are not accepted by this server`,
      });
    }
    reply.header('access-control-allow-origin', origin);
    reply.header('access-control-allow-credentials', 'true');
    reply.header('access-control-expose-headers', 'Retry-After');
    reply.header('vary', 'Origin');
    if (request.method === 'OPTIONS') {
      reply.header('access-control-allow-methods', 'GET, POST, OPTIONS');
      reply.header('access-control-allow-headers', ALLOWED_HEADERS);
      reply.header('access-control-max-age', '3600');
      return reply.code(204).send();
    }
  });
}
