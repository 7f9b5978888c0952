import type { FastifyInstance, FastifyRequest } from 'fastify';

import { SESSION_COOKIE } from '../../auth/cookies.js';
import type { PrefetchedAccess } from '../../services/conversations/index.js';
import type { SessionService } from '../../services/sessions/index.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * The route reads the session itself (`readSession`), once it knows what else to read with
     * it; the tree's hook only takes the cookie.
     */
    readsSessionItself?: boolean;
  }
}

/** Reads the session cookie (the /api tree); a dead cookie makes the request anonymous. */
export function registerSessionReader(app: FastifyInstance, sessions: SessionService): void {
  app.addHook('preHandler', async (request) => {
    const token = request.cookies[SESSION_COOKIE];
    if (!token) return;
    request.svc.sessionToken = token;
    if (request.routeOptions.config.readsSessionItself) return;
    request.svc.session = await sessions.resolve(token);
  });
}

/**
 * For a route that reads the session itself: the session of the request's cookie into
 * `request.svc.session`, with the caller's access to `conversationId` when one is named (read
 * together on PostgreSQL; conversations/prefetched-access.ts).
 */
export async function readSession(
  request: FastifyRequest,
  sessions: SessionService,
  conversationId: string | null,
): Promise<PrefetchedAccess | undefined> {
  const token = request.svc.sessionToken;
  if (token === null) return undefined;
  const { session, access } = await sessions.resolveWithAccess(token, conversationId);
  request.svc.session = session;
  return access;
}
