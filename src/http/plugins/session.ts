import type { FastifyInstance } from 'fastify';

import { SESSION_COOKIE } from '../../auth/cookies.js';
import type { SessionService } from '../../services/sessions/session-service.js';

/** Reads the session cookie (the /api tree); a dead cookie makes the request anonymous. */
export function registerSessionReader(app: FastifyInstance, sessions: SessionService): void {
  app.addHook('preHandler', async (request) => {
    const token = request.cookies[SESSION_COOKIE];
    if (!token) return;
    request.svc.sessionToken = token;
    request.svc.session = await sessions.resolve(token);
  });
}
