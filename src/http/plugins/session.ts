import type { FastifyInstance } from 'fastify';

import type { SessionService } from '../../services/sessions/session-service.js';
import { SESSION_COOKIE } from '../request-state.js';

import { isApiPath } from './origin.js';

/** Reads the session cookie for routes under /api; a dead cookie makes the request anonymous. */
export function registerSessionReader(app: FastifyInstance, sessions: SessionService): void {
  app.addHook('preHandler', async (request) => {
    if (!isApiPath(request.url)) return;
    const token = request.cookies[SESSION_COOKIE];
    if (!token) return;
    request.svc.sessionToken = token;
    request.svc.session = await sessions.resolve(token);
  });
}
