import type { FastifyInstance, FastifyReply } from 'fastify';

import type { Admission, Refusal, Zone } from '../admission.js';
import type { RequestState } from '../request-state.js';

const ALLOWED_HEADERS = 'Content-Type, Authorization, X-CSRF-Token, X-Request-Id';

/**
 * The first hook of a route tree: admits the request under the tree's zone (./admission.ts) and
 * records what it learnt as `request.svc`. Under /api an allowed cross-origin caller gets the
 * credentialed CORS headers, and its preflight is answered here.
 */
export function registerAdmission(app: FastifyInstance, admission: Admission, zone: Zone): void {
  app.addHook('onRequest', async (request, reply) => {
    const verdict = admission.admit(
      {
        peer: request.socket.remoteAddress,
        encrypted: (request.socket as { encrypted?: boolean }).encrypted === true,
        headers: request.headers,
      },
      zone,
    );
    if (!verdict.ok) return refuse(reply, verdict);
    const state = verdict as RequestState;
    state.session = null;
    state.sessionToken = null;
    request.svc = state;
    const origin = verdict.corsOrigin;
    if (origin === null) return;
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

function refuse(reply: FastifyReply, refusal: Refusal): FastifyReply {
  if (refusal.retryAfterSeconds !== null) {
    reply.header('retry-after', String(refusal.retryAfterSeconds));
  }
  return reply.code(refusal.status).send(refusal.body);
}
