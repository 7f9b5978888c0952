import type { FeatureName } from './config/features.js';

/** The contract's GraphQL error codes. Never renamed, never reused. */
export type ErrorCode =
  | 'UNAUTHENTICATED'
  | 'FORBIDDEN'
  | 'NOT_FOUND'
  | 'VALIDATION'
  | 'CONFLICT'
  | 'EMAIL_TAKEN'
  | 'INVALID_TOKEN'
  | 'EXPIRED_TOKEN'
  | 'RATE_LIMITED'
  | 'TOO_MANY_SUBSCRIPTIONS'
  | 'CONFIRMATION_STALE'
  | 'CONFIRMATION_FAILED'
  | 'CONVERSATION_ARCHIVED'
  | 'TIMED_OUT'
  | 'STALE_EPOCH'
  | 'MLS_COMMIT_REQUIRED'
  | 'FEATURE_DISABLED'
  | 'UPSTREAM_UNAVAILABLE'
  | 'UNAVAILABLE'
  | 'TIMEOUT'
  | 'INTERNAL';

/** HTTP status for file and plugin routes, by code (contract: File and plugin bundle routes). */
export const HTTP_STATUS_BY_CODE: Record<ErrorCode, number> = {
  UNAUTHENTICATED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  VALIDATION: 400,
  CONFLICT: 409,
  EMAIL_TAKEN: 409,
  INVALID_TOKEN: 400,
  EXPIRED_TOKEN: 400,
  RATE_LIMITED: 429,
  TOO_MANY_SUBSCRIPTIONS: 429,
  CONFIRMATION_STALE: 409,
  CONFIRMATION_FAILED: 409,
  CONVERSATION_ARCHIVED: 409,
  TIMED_OUT: 403,
  STALE_EPOCH: 409,
  MLS_COMMIT_REQUIRED: 409,
  FEATURE_DISABLED: 403,
  UPSTREAM_UNAVAILABLE: 502,
  UNAVAILABLE: 503,
  TIMEOUT: 504,
  INTERNAL: 500,
};

/**
 * The one error family a client may see. `extensions` holds the contract's extra fields
 * (`retryAfterSeconds`, `feature`, `limit`, `until`, ...), copied as they are into GraphQL
 * `extensions` and into HTTP error bodies.
 */
export class AppError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly extensions: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = 'AppError';
  }
}

export const unauthenticated = (message = 'sign in first') =>
  new AppError('UNAUTHENTICATED', message);
export const forbidden = (message = 'you may not do this') => new AppError('FORBIDDEN', message);
export const notFound = (what = 'object') => new AppError('NOT_FOUND', `${what} not found`);
export const validation = (message: string, extensions: Record<string, unknown> = {}) =>
  new AppError('VALIDATION', message, extensions);
export const conflict = (message: string) => new AppError('CONFLICT', message);
export const rateLimited = (retryAfterSeconds: number, message = 'too many requests') =>
  new AppError(
    'RATE_LIMITED',
    `${message}; retry in ${Math.max(1, Math.ceil(retryAfterSeconds))} s`,
    {
      retryAfterSeconds: Math.max(1, Math.ceil(retryAfterSeconds)),
    },
  );
export const featureDisabled = (feature: FeatureName) =>
  new AppError('FEATURE_DISABLED', `the ${feature} feature is not enabled on this server`, {
    feature,
  });
/** A cap exceeded: VALIDATION naming the cap and its variable. */
/**
 * VALIDATION for one more past a cap, naming it. `builtIn`: the binding cap is the server's own
 * maximum (the operator set none, or one above it), which the message says, since
 * `serverInfo.limits` reports null for it.
 */
export const capExceeded = (cap: string, variable: string, limit: number, builtIn = false) =>
  new AppError(
    'VALIDATION',
    builtIn
      ? `limit reached: ${cap} is capped at ${limit} (the built-in maximum; ${variable} can lower it)`
      : `limit reached: ${cap} is capped at ${limit} (${variable})`,
    { limit },
  );

/** Which dependency failed, for the log. */
export type Dependency = 'database' | 'disk' | 'redis' | 'smtp';

/**
 * UNAVAILABLE or TIMEOUT for a dependency that failed (database, disk, Redis, SMTP). The client
 * sees a fixed message; `cause` (the driver's error) and `dependency` go to the log.
 */
export class DependencyError extends AppError {
  constructor(
    code: 'UNAVAILABLE' | 'TIMEOUT',
    readonly dependency: Dependency,
    override readonly cause: unknown,
  ) {
    super(
      code,
      code === 'TIMEOUT'
        ? `the ${dependency === 'disk' ? 'database' : dependency} took too long to answer; retry shortly`
        : dependency === 'disk'
          ? 'the server cannot store data right now; retry shortly'
          : `the ${dependency} is unavailable; retry shortly`,
    );
    this.name = 'DependencyError';
  }
}

/** Seconds a client is asked to wait before retrying after UNAVAILABLE or TIMEOUT. */
export const DEPENDENCY_RETRY_AFTER_SECONDS = 5;

// Socket errors that mean the peer cannot be reached or the connection broke.
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ENOTFOUND',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENETDOWN',
  'EAI_AGAIN',
  'ECONNABORTED',
]);

/** ioredis's error for a command issued while its connection is down, with no offline queue. */
const REDIS_NOT_WRITABLE = "Stream isn't writeable and enableOfflineQueue options is false";

// pg's own messages for a connection that broke, never opened, or timed out.
const PG_UNAVAILABLE = [
  'Connection terminated',
  'Client has encountered a connection error and is not queryable',
  'Client was closed and is not queryable',
];
const PG_TIMEOUT = [
  'timeout exceeded when trying to connect',
  'Connection terminated due to connection timeout',
  'Query read timeout',
];

/**
 * The DependencyError a driver error stands for (pg, better-sqlite3, ioredis, nodemailer, the
 * socket layer), or null when it is not a dependency failure (a fault, or bad input). Follows
 * `cause` chains.
 */
export function dependencyError(err: unknown): DependencyError | null {
  for (let e = err, depth = 0; e && typeof e === 'object' && depth < 5; depth++) {
    if (e instanceof DependencyError) return e;
    const kind = classify(e as Error & { code?: unknown; name?: string });
    if (kind) return new DependencyError(kind[0], kind[1], err);
    e = (e as { cause?: unknown }).cause;
  }
  return null;
}

function classify(
  e: Error & { code?: unknown },
): [code: 'UNAVAILABLE' | 'TIMEOUT', dependency: Dependency] | null {
  const code = typeof e.code === 'string' ? e.code : '';
  const message = typeof e.message === 'string' ? e.message : '';
  // better-sqlite3
  if (code === 'SQLITE_FULL') return ['UNAVAILABLE', 'disk'];
  if (code.startsWith('SQLITE_IOERR') || code.startsWith('SQLITE_READONLY'))
    return ['UNAVAILABLE', 'disk'];
  if (code === 'SQLITE_CANTOPEN') return ['UNAVAILABLE', 'database'];
  if (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED'))
    return ['TIMEOUT', 'database'];
  // PostgreSQL SQLSTATEs: 08 connection exception, 57P0x shutdown or terminated backend, 53
  // insufficient resources (disk full, too many connections), 57014 statement cancelled by
  // statement_timeout, 25P03 idle-in-transaction timeout.
  if (/^[0-9A-Z]{5}$/.test(code)) {
    if (code === '57014' || code === '25P03') return ['TIMEOUT', 'database'];
    if (code.startsWith('08') || code.startsWith('57P') || code.startsWith('53'))
      return ['UNAVAILABLE', 'database'];
    return null;
  }
  if (PG_TIMEOUT.some((m) => message.startsWith(m))) return ['TIMEOUT', 'database'];
  if (PG_UNAVAILABLE.some((m) => message.startsWith(m))) return ['UNAVAILABLE', 'database'];
  // ioredis
  if (
    e.name === 'MaxRetriesPerRequestError' ||
    message === 'Connection is closed.' ||
    // A command issued while the connection is down (no offline queue: redis-bus.ts).
    message === REDIS_NOT_WRITABLE
  )
    return ['UNAVAILABLE', 'redis'];
  if (message === 'Command timed out') return ['TIMEOUT', 'redis'];
  // nodemailer
  if (code === 'ECONNECTION' || code === 'ESOCKET') return ['UNAVAILABLE', 'smtp'];
  if (code === 'ETIMEDOUT' && 'command' in e) return ['TIMEOUT', 'smtp'];
  // the socket layer (the database unless a driver above said otherwise)
  if (NETWORK_CODES.has(code)) return ['UNAVAILABLE', 'database'];
  if (code === 'ETIMEDOUT') return ['TIMEOUT', 'database'];
  return null;
}

/**
 * A dependency failure is expected in operation (a restart, a full disk): logged as a warning
 * with the driver's own error, which is the real cause, and without a stack trace.
 */
export function logDependencyFailure(
  log: { warn(obj: object, msg: string): void },
  err: DependencyError,
  extra: Record<string, unknown> = {},
): void {
  const cause = err.cause as { message?: unknown; code?: unknown } | null;
  log.warn(
    {
      dependency: err.dependency,
      code: err.code,
      cause: { message: cause?.message, code: cause?.code },
      ...extra,
    },
    `${err.dependency} failed`,
  );
}
