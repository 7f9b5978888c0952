import type { FastifyRequest, preHandlerAsyncHookHandler } from 'fastify';

import { CSRF_COOKIE, CSRF_HEADER } from '../../auth/cookies.js';
import { forbidden } from '../../errors.js';
import { firstHeader } from '../../lib/headers.js';
import type { SessionService } from '../../services/sessions/index.js';
import { sendError } from '../errors.js';

/** Contract (CSRF token, rule 9): the message of a refusal, on GraphQL and on routes alike. */
export const CSRF_REFUSAL = 'csrf validation failed';

/**
 * Whether a request passes the CSRF check (contract: CSRF token, rule 2): the header equals the
 * cookie, and the token is bound to the request's session cookie.
 */
export function csrfAccepted(sessions: SessionService, request: FastifyRequest): boolean {
  const header = firstHeader(request.headers[CSRF_HEADER]);
  const cookie = request.cookies[CSRF_COOKIE];
  const token = request.svc.sessionToken;
  if (!header || !cookie || !token || header !== cookie) return false;
  return sessions.csrfMatches(token, header);
}

/**
 * The route form of the check, for the /api routes other than GraphQL that must carry the
 * header (uploads, avatars, plugin bundles, relayed POSTs): 403 `{"error":"csrf validation
 * failed"}` unless it passes. The /api tree hands it to its routes (ApiGuards.csrf).
 */
export function requireCsrf(sessions: SessionService): preHandlerAsyncHookHandler {
  return async function csrfGuard(request, reply) {
    if (!csrfAccepted(sessions, request)) return sendError(reply, forbidden(CSRF_REFUSAL));
  };
}
