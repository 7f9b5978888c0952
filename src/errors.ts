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
export const capExceeded = (cap: string, variable: string, limit: number) =>
  new AppError('VALIDATION', `limit reached: ${cap} is capped at ${limit} (${variable})`, {
    limit,
  });
