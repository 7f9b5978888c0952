import { validation, type AppError } from '../../errors.js';

/**
 * The refusals of busboy and @fastify/multipart that mean "this body is not the form the route
 * takes" (too many files, fields or parts, a bad field name, a body cut short). Every file route
 * answers them the same way: 400 `VALIDATION` naming the form to send, never 413 (the body is not
 * too large, it is the wrong shape) and never 500. `form` says what the route takes, e.g.
 * "upload_token, attachment_id and one file".
 */
export function multipartLimitRefusal(err: unknown, form: string): AppError | null {
  const code = (err as { code?: unknown } | null)?.code;
  switch (code) {
    case 'FST_FILES_LIMIT':
      return validation(`send exactly one file (the form is ${form})`);
    case 'FST_FIELDS_LIMIT':
      return validation(`too many fields: send ${form}`);
    case 'FST_PARTS_LIMIT':
      return validation(`too many parts: send ${form}`);
    case 'FST_PROTO_VIOLATION':
      return validation('a field name is not allowed');
    case 'FST_INVALID_JSON_FIELD_ERROR':
      return validation('a field is not valid JSON as its Content-Type declares');
    case 'FST_MP_PREMATURE_CLOSE':
      return validation('the request ended before the multipart body was complete');
    default:
      return null;
  }
}
