import type { FastifyInstance } from 'fastify';

import type { IpBlockService } from '../../services/ip-blocks/ip-block-service.js';

/** 403 `{"error":"blocked"}` for a denied address on every route but /healthz. */
export function registerDenyList(app: FastifyInstance, ipBlocks: IpBlockService): void {
  app.addHook('onRequest', async (request, reply) => {
    if (request.url === '/healthz' || request.url.startsWith('/healthz?')) return;
    if (ipBlocks.isBlocked(request.svc.clientAddress)) {
      return reply.code(403).send({ error: 'blocked' });
    }
  });
}
