import type { SessionInfo } from '../services/sessions/session-service.js';

/** What the hooks learn about a request before its handler runs. */
export interface RequestState {
  /** Client address: the TCP peer, or the one a trusted proxy names. */
  clientAddress: string;
  /** `https` or `http`, as seen by the client (a trusted proxy may say). */
  protocol: 'http' | 'https';
  session: SessionInfo | null;
  /** The raw `svc_session` cookie, when present (even if it names no live session). */
  sessionToken: string | null;
}

declare module 'fastify' {
  interface FastifyRequest {
    svc: RequestState;
  }
}

export const SESSION_COOKIE = 'svc_session';
export const CSRF_COOKIE = 'svc_csrf';
export const CSRF_HEADER = 'x-csrf-token';
