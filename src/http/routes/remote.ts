import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

import type { AppContext } from '../../context.js';
import { RelayRefusal } from '../../federation/federation-service.js';
import { fastifyErrorHandler } from '../errors.js';
import { csrfAccepted, CSRF_REFUSAL } from '../plugins/csrf.js';
import type { ApiRoutes } from '../trees/api.js';

/** Relay body size (contract: Other constants). */
export const RELAY_BODY_LIMIT = 32 * 1024 * 1024;

const refuse = (reply: FastifyReply, r: RelayRefusal) => reply.code(r.status).send(r.body());

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
    // Refusals before the handler (a body over 32 MiB, a broken upload) keep the relay's shape.
    relay.setErrorHandler((err: FastifyError, _request, reply) => {
      if (err.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
        return refuse(
          reply,
          new RelayRefusal(413, 'too_large', 'a relayed body may be at most 32 MiB'),
        );
      }
      if ((err.statusCode ?? 500) < 500) {
        return refuse(reply, new RelayRefusal(err.statusCode ?? 400, 'validation', err.message));
      }
      return fastifyErrorHandler(err, _request, reply);
    });
    relay.route({
      method: ['GET', 'POST'],
      url: '/remote/:host/*',
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
    return reply.code(answer.status).headers(answer.headers).send(answer.body);
  } catch (err) {
    if (err instanceof RelayRefusal) return refuse(reply, err);
    throw err;
  }
}
