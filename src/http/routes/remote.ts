import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

import type { AppContext } from '../../context.js';
import { AppError, dependencyError } from '../../errors.js';
import { RelayRefusal } from '../../federation/relay-refusal.js';
import { httpFailure } from '../errors.js';
import { csrfAccepted, CSRF_REFUSAL } from '../plugins/csrf.js';
import type { ApiRoutes } from '../trees/api.js';

/** Relay body size (contract: Other constants). */
export const RELAY_BODY_LIMIT = 32 * 1024 * 1024;

const refuse = (reply: FastifyReply, r: RelayRefusal) => reply.code(r.status).send(r.body());

/**
 * Headers the relay adds to every forwarded answer: it serves another server's bytes on its own
 * origin, so a browser must neither sniff them into something else nor run them as a page.
 */
const FORWARDED_ANSWER_HEADERS = {
  'x-content-type-options': 'nosniff',
  'content-security-policy': "sandbox; default-src 'none'",
} as const;

/**
 * Every answer of the relay's own, faults included, in its shape `{"error","message"}`: the
 * route's refusals, Fastify's (a body over 32 MiB, a broken body), a dependency that failed
 * (503 or 504 with Retry-After) and a fault (500, logged with its stack).
 */
function relayErrorHandler(err: FastifyError, _request: FastifyRequest, reply: FastifyReply) {
  if (err instanceof RelayRefusal) return refuse(reply, err);
  if (err.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
    return refuse(
      reply,
      new RelayRefusal(413, 'too_large', 'a relayed body may be at most 32 MiB'),
    );
  }
  if (!(err instanceof AppError) && !dependencyError(err)) {
    // Fastify's own refusals of the request (a broken body, a wrong content type).
    const status = err.statusCode ?? 500;
    if (status >= 400 && status < 500) {
      return refuse(reply, new RelayRefusal(status, 'validation', err.message));
    }
  }
  // The one mapping (http/errors.ts) in the relay's shape.
  const failure = httpFailure(reply, err);
  const message =
    failure.code === 'INTERNAL' ? 'the relay failed; its log has the detail' : failure.message;
  return refuse(
    reply,
    new RelayRefusal(failure.status, failure.code.toLowerCase(), message, failure.fields),
  );
}

/**
 * GET and POST /api/remote/{host_server_id}/{tail} (contract: Relay): the session (and CSRF on
 * POST) is checked here, the body is read raw whatever its type and forwarded unchanged, and the
 * host's status, body and passed headers come back unchanged. The relay's own refusals are
 * `{"error","message"}`; a host without a verified answer is 502 `upstream_unavailable` with
 * `hostServerId`.
 */
export const registerRemoteRoutes: ApiRoutes = (api, ctx) => {
  void api.register(async (relay: FastifyInstance) => {
    relay.removeAllContentTypeParsers();
    relay.addContentTypeParser(
      '*',
      { parseAs: 'buffer', bodyLimit: RELAY_BODY_LIMIT },
      (_request, body, done) => done(null, body),
    );
    relay.setErrorHandler(relayErrorHandler);
    relay.route({
      method: ['GET', 'POST'],
      url: '/remote/:host/*',
      // GET and POST only (contract): a HEAD would reach the host as another method than the
      // device signed, and its bodiless answer could never verify.
      exposeHeadRoute: false,
      bodyLimit: RELAY_BODY_LIMIT,
      handler: async (request, reply) => relayRequest(ctx, request, reply),
    });
  });
};

async function relayRequest(ctx: AppContext, request: FastifyRequest, reply: FastifyReply) {
  const session = request.svc.session;
  if (!session) {
    return refuse(reply, new RelayRefusal(401, 'unauthenticated', 'sign in first'));
  }
  if (request.method === 'POST' && !csrfAccepted(ctx.services.sessions, request)) {
    return refuse(reply, new RelayRefusal(403, 'forbidden', CSRF_REFUSAL));
  }
  const params = request.params as { host: string; '*': string };
  const query = request.url.includes('?') ? request.url.slice(request.url.indexOf('?')) : '';
  try {
    const answer = await ctx.federation.service.relay({
      session,
      hostServerId: params.host,
      method: request.method as 'GET' | 'POST',
      tail: `/${params['*']}${query}`,
      headers: request.headers,
      body: Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0),
    });
    return reply
      .code(answer.status)
      .headers({ ...answer.headers, ...FORWARDED_ANSWER_HEADERS })
      .send(answer.body);
  } catch (err) {
    if (err instanceof RelayRefusal) return refuse(reply, err);
    throw err;
  }
}
