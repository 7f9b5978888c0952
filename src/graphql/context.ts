import type { Logger } from 'pino';

import type { AppContext } from '../context.js';
import { unauthenticated } from '../errors.js';
import type { IssuedSession, SessionInfo } from '../services/sessions/session-service.js';

/** What a resolver may do to the response's cookies (HTTP only; a no-op on the WebSocket). */
export interface CookieJar {
  /** Sets `svc_session` and `svc_csrf` for a newly started session. */
  startSession(session: IssuedSession): void;
  /** Clears both cookies. */
  clearSession(): void;
}

/** Per-request context handed to every resolver. */
export interface GraphqlContext {
  app: AppContext;
  requestId: string;
  session: SessionInfo | null;
  /** The raw `svc_session` cookie value, when the request carried one. */
  sessionToken: string | null;
  ip: string;
  userAgent: string | null;
  log: Logger;
  cookies: CookieJar;
  transport: 'http' | 'ws';
}

/** The caller's session, or UNAUTHENTICATED for an anonymous request. */
export function requireSession(ctx: GraphqlContext): SessionInfo {
  if (!ctx.session) throw unauthenticated();
  return ctx.session;
}
