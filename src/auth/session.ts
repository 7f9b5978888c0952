/**
 * A signed-in request's session, as the edges and the actor see it (sessions/session-service.ts
 * reads it; `userActor` turns it into the request's actor).
 */
export interface SessionInfo {
  sessionId: string;
  accountId: string;
  username: string;
  deviceId: string | null;
  expiresAt: number;
  /** Home server of a person from another server; null for a local account. */
  homeServer: string | null;
  /**
   * The account is an instance operator and this is the person's own sign-in session. Instance
   * moderation trusts this flag alone (services/moderation/actor.ts): a session that acts for a
   * person (an app or bot) must set it false.
   */
  isOperator: boolean;
}

/** A live session as its owner sees it in `mySessions`. */
export interface SessionView {
  id: string;
  deviceId: string | null;
  createdAt: number;
  expiresAt: number;
  ip: string | null;
  userAgent: string | null;
  current: boolean;
}

/** A session just started: the cookie's token and the CSRF token the client sends back. */
export interface IssuedSession {
  sessionId: string;
  token: string;
  csrfToken: string;
  expiresAt: number;
  maxAgeSeconds: number;
}
