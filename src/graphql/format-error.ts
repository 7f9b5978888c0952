import { GraphQLError, type GraphQLFormattedError } from 'graphql';
import type { Logger } from 'pino';

import { AppError, dependencyError, logDependencyFailure } from '../errors.js';

/**
 * Maps an error to what the client sees. A resolver's AppError carries its code and extra
 * fields; GraphQL's own errors before execution (syntax, validation, variable coercion) carry
 * no code; anything else, an execution error of GraphQL's own included, is a fault: masked as
 * INTERNAL and logged.
 */
export function formatError(
  err: GraphQLError,
  requestId: string,
  log: Logger,
): GraphQLFormattedError {
  const original = err.originalError;
  const base: {
    message: string;
    locations?: GraphQLFormattedError['locations'];
    path?: GraphQLFormattedError['path'];
  } = {
    message: err.message,
  };
  if (err.locations) base.locations = err.locations;
  if (err.path) base.path = err.path;

  const dependency = original ? dependencyError(original) : null;
  if (dependency) {
    logDependencyFailure(log, dependency, { path: err.path });
    return {
      ...base,
      message: dependency.message,
      extensions: { code: dependency.code, request_id: requestId },
    };
  }
  if (original instanceof AppError) {
    return {
      ...base,
      message: original.message,
      extensions: { code: original.code, ...original.extensions, request_id: requestId },
    };
  }
  if (original && isUnstorableText(original)) {
    // Text the database refuses (PostgreSQL: NUL or bytes outside UTF-8) is bad input, not a fault.
    return {
      ...base,
      message: 'text contains a character that cannot be stored',
      extensions: { code: 'VALIDATION', request_id: requestId },
    };
  }
  if (original && !(original instanceof GraphQLError)) {
    log.error({ err: original, path: err.path }, 'resolver failed');
    return {
      ...base,
      message: 'internal error; the server log has the details under this request_id',
      extensions: { code: 'INTERNAL', request_id: requestId },
    };
  }
  if (err.path) {
    // An error GraphQL raised while executing (a null in a non-null field, a value its scalar
    // cannot serialize) is the server's fault, not the request's: masked and coded like any.
    log.error({ err: { message: err.message }, path: err.path }, 'answer breaks the schema');
    return {
      ...base,
      message: 'internal error; the server log has the details under this request_id',
      extensions: { code: 'INTERNAL', request_id: requestId },
    };
  }
  return { ...base, extensions: { ...(err.extensions ?? {}), request_id: requestId } };
}

/** An error GraphQL itself reports (no code), with the request id. */
export function plainError(message: string, requestId: string): GraphQLFormattedError {
  return { message, extensions: { request_id: requestId } };
}

/** A contract error raised before execution (rate limit, ...), with its code. */
export function codedError(err: AppError, requestId: string): GraphQLFormattedError {
  return {
    message: err.message,
    extensions: { code: err.code, ...err.extensions, request_id: requestId },
  };
}

/** PostgreSQL's `character_not_in_repertoire` and `untranslatable_character`. */
function isUnstorableText(err: Error): boolean {
  const code = (err as Error & { code?: unknown }).code;
  return code === '22021' || code === '22P05';
}
