import type { Logger } from 'pino';

import { userActor, type UserActor } from '../auth/actor.js';
import type { Config } from '../config/index.js';
import type { Federation } from '../federation/index.js';
import type { Clock } from '../lib/clock.js';
import type { Services } from '../services/index.js';
import { unauthenticated } from '../errors.js';
import type { AccountView } from '../services/accounts/index.js';
import { PREFETCHED_ACCESS, type PrefetchedAccess } from '../services/conversations/index.js';
import type { SessionInfo } from '../auth/session.js';
import type { IssuedSession } from '../services/sessions/index.js';

import type { RequestLoaders } from './loaders.js';

/** What a resolver may do to the response's cookies (HTTP only; a no-op on the WebSocket). */
export interface CookieJar {
  /** Sets `svc_session` and `svc_csrf` for a newly started session. */
  startSession(session: IssuedSession): void;
  /** Clears both cookies. */
  clearSession(): void;
}

/** Per-request context handed to every resolver. */
export interface GraphqlContext {
  /** The services a resolver calls; resolvers see these, not the composition root. */
  services: Services;
  clock: Clock;
  /** Relay and host roles (the revocations a relay applies). */
  federation: Federation;
  /** The configuration and the version, for `serverInfo`. */
  config: Config;
  version: string;
  requestId: string;
  session: SessionInfo | null;
  /** The raw `svc_session` cookie value, when the request carried one. */
  sessionToken: string | null;
  ip: string;
  userAgent: string | null;
  log: Logger;
  cookies: CookieJar;
  transport: 'http' | 'ws';
  /**
   * The signed-in person as services see them, built once per request by `requireActor` (the
   * per-request role memo of `Authz` hangs off this object).
   */
  actor?: UserActor;
  /**
   * The caller's account as read with the session, set only while it is known to be current:
   * for the first operation of an HTTP request (nothing has run since the read). `me` answers
   * from it instead of reading the account again.
   */
  sessionAccount?: AccountView;
  /**
   * The caller's access to the conversation the request names, read with the session (first
   * operation of an HTTP request); `requireActor` primes the request's `Authz` memo with it.
   */
  prefetchedAccess?: PrefetchedAccess;
  /** The request's batching loaders (graphql/loaders.ts), created on first use. */
  loaders?: RequestLoaders;
}

/** The caller's session, or UNAUTHENTICATED for an anonymous request. */
export function requireSession(ctx: GraphqlContext): SessionInfo {
  if (!ctx.session) throw unauthenticated();
  return ctx.session;
}

/** The caller as an `Actor` for service calls, or UNAUTHENTICATED for an anonymous request. */
export function requireActor(ctx: GraphqlContext): UserActor {
  if (ctx.actor) return ctx.actor;
  const actor = userActor(requireSession(ctx));
  if (ctx.prefetchedAccess) {
    ctx.services.authz.prime(actor, PREFETCHED_ACCESS, ctx.prefetchedAccess);
  }
  return (ctx.actor = actor);
}

/** The caller as an `Actor`, or null for an anonymous request (fields that answer null). */
export function optionalActor(ctx: GraphqlContext): UserActor | null {
  return ctx.session ? requireActor(ctx) : null;
}
