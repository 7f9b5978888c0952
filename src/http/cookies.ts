import type { FastifyReply, FastifyRequest } from 'fastify';

import type { Config } from '../config/index.js';
import type { CookieJar } from '../graphql/context.js';
import type { IssuedSession } from '../services/sessions/index.js';

import { CSRF_COOKIE, SESSION_COOKIE } from '../auth/cookies.js';

/** Whether cookies get the Secure attribute (forced, or a trusted proxy reports https). */
export function secureCookies(config: Config, request: FastifyRequest): boolean {
  return (
    config.http.forceSecureCookies ||
    (config.http.trustForwardedHeaders && request.svc.protocol === 'https')
  );
}

/** The cookie jar a GraphQL request's resolvers write to. */
export function httpCookieJar(
  config: Config,
  request: FastifyRequest,
  reply: FastifyReply,
): CookieJar {
  const secure = secureCookies(config, request);
  return {
    startSession(session: IssuedSession) {
      const base = { path: '/', sameSite: 'lax' as const, secure, maxAge: session.maxAgeSeconds };
      reply.setCookie(SESSION_COOKIE, session.token, { ...base, httpOnly: true });
      reply.setCookie(CSRF_COOKIE, session.csrfToken, { ...base, httpOnly: false });
    },
    clearSession() {
      const base = { path: '/', sameSite: 'lax' as const, secure, maxAge: 0, expires: new Date(0) };
      reply.setCookie(SESSION_COOKIE, '', { ...base, httpOnly: true });
      reply.setCookie(CSRF_COOKIE, '', { ...base, httpOnly: false });
    },
  };
}
