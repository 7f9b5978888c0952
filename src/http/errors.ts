import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';

import {
  AppError,
  type ErrorCode,
  DEPENDENCY_RETRY_AFTER_SECONDS,
  dependencyError,
  HTTP_STATUS_BY_CODE,
  logDependencyFailure,
} from '../errors.js';

/**
 * A refusal that only plain routes give and the GraphQL error family has no code for (contract:
 * File and plugin bundle routes): 413 body over the route's limit, 415 a file type the route
 * does not take, 422 a plugin bundle the service refused.
 */
export class RouteError extends Error {
  constructor(
    readonly status: 413 | 415 | 422,
    message: string,
  ) {
    super(message);
    this.name = 'RouteError';
  }
}

/**
 * The one place where errors become HTTP bodies for plain routes (files, plugin bundles, the
 * relay, /s2s): `{"error":"<message>"}` plus the contract's extra fields: `code` and `feature`
 * with a 403 for FEATURE_DISABLED, `retryAfterSeconds` and `Retry-After` with a 429, `until`
 * with a timeout. A route handler throws an AppError or a RouteError, or passes one here; faults
 * are masked and logged with their stack.
 */
export function sendError(reply: FastifyReply, err: unknown): FastifyReply {
  if (err instanceof RouteError) return reply.code(err.status).send({ error: err.message });
  const failure = httpFailure(reply, err);
  const body: Record<string, unknown> = { error: failure.message, ...failure.fields };
  if (failure.code === 'FEATURE_DISABLED') body.code = failure.code;
  return reply.code(failure.status).send(body);
}

/** What an error means as an HTTP answer, before a route puts it in its shape. */
export interface HttpFailure {
  status: number;
  /** The error family's code; INTERNAL for a fault. */
  code: ErrorCode;
  message: string;
  /** The contract's extra fields (the AppError's extensions; `request_id` for a fault). */
  fields: Record<string, unknown>;
}

/**
 * The one mapping from an error to an HTTP failure, whatever the answer's shape (plain routes'
 * `{"error"}` in sendError, the relay's `{"error","message"}`): a dependency that failed is 503
 * or 504 with `Retry-After` (the client may try again once it is back), an AppError its code's
 * status (with `Retry-After` when it carries `retryAfterSeconds`), anything else a fault: logged
 * with its stack, 500 with the request id.
 */
export function httpFailure(reply: FastifyReply, err: unknown): HttpFailure {
  const dependency = dependencyError(err);
  if (dependency) {
    logDependencyFailure(reply.request.log, dependency);
    reply.header('retry-after', String(DEPENDENCY_RETRY_AFTER_SECONDS));
    return {
      status: HTTP_STATUS_BY_CODE[dependency.code],
      code: dependency.code,
      message: dependency.message,
      fields: {},
    };
  }
  if (err instanceof AppError) {
    const retryAfter = err.extensions.retryAfterSeconds;
    if (typeof retryAfter === 'number') reply.header('retry-after', String(retryAfter));
    return {
      status: HTTP_STATUS_BY_CODE[err.code],
      code: err.code,
      message: err.message,
      fields: err.extensions,
    };
  }
  reply.request.log.error({ err }, 'request failed');
  return {
    status: 500,
    code: 'INTERNAL',
    message: 'internal error',
    fields: { request_id: reply.request.id },
  };
}

/** Fastify's own errors (bad JSON, body too large, wrong content type) as clear 4xx bodies. */
export function fastifyErrorHandler(
  err: FastifyError,
  request: FastifyRequest,
  reply: FastifyReply,
) {
  if (err instanceof AppError || err instanceof RouteError || dependencyError(err))
    return sendError(reply, err);
  const status = err.statusCode ?? 500;
  if (status >= 400 && status < 500) {
    const code = err.code;
    let message = err.message;
    let httpStatus = status;
    if (code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
      message = `content type ${request.headers['content-type'] ?? '(none)'} is not accepted here; send application/json`;
      if (
        request.url.startsWith('/api') &&
        !request.url.startsWith('/api/files') &&
        !request.url.startsWith('/api/plugin-bundles')
      )
        httpStatus = 400;
    } else if (code === 'FST_ERR_CTP_INVALID_JSON_BODY' || err.name === 'SyntaxError') {
      message = `the body is not valid JSON: ${err.message}`;
    } else if (code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
      message = 'the body is larger than this route accepts';
    } else if (code === 'FST_ERR_CTP_EMPTY_JSON_BODY') {
      message = 'the body is empty; send a JSON object';
    }
    return reply.code(httpStatus).send({ error: message });
  }
  request.log.error({ err }, 'request failed');
  return reply.code(500).send({ error: 'internal error', request_id: request.id });
}
