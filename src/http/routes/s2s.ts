import type { FastifyInstance, FastifyRequest } from 'fastify';

import type { AppContext } from '../../context.js';
import { AppError } from '../../errors.js';
import type { LocalRunner } from '../../federation/federation-service.js';
import { RELAYED_ADDRESS } from '../admission.js';
import type { S2sVerifier } from '../trees/s2s.js';
import type { S2sRoutes } from '../trees/s2s.js';

/** The verified peer of an /s2s call (set by the verifier before any handler). */
const peers = new WeakMap<FastifyRequest, { serverId: string; key: string }>();

/**
 * Forwarded device requests of a proven relay that is over its peer rate: the forward route
 * answers them with a 429 signed for the device's request (FederationService.hostOverLimit).
 */
const overLimit = new WeakMap<FastifyRequest, AppError>();

const isForward = (request: FastifyRequest) => request.url.startsWith('/s2s/v1/forward/');

const bodyOf = (request: FastifyRequest): Buffer =>
  Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);

/** The body parsed as JSON; undefined when it is not JSON. */
function jsonOf<T>(request: FastifyRequest): T | undefined {
  try {
    return JSON.parse(bodyOf(request).toString('utf8')) as T;
  } catch {
    return undefined;
  }
}

/** The tree's verifier: federation's RFC 9421 check (docs/federation.md). */
export function federationVerifier(ctx: AppContext): S2sVerifier {
  return async (request) => {
    let peer;
    try {
      peer = await ctx.federation.verifier.verify({
        method: request.method,
        url: request.url,
        headers: request.headers,
        body: bodyOf(request),
      });
    } catch (err) {
      // The peer rate is counted only after the signature is proven (S2sVerifier.verify).
      if (err instanceof AppError && err.code === 'RATE_LIMITED' && isForward(request)) {
        overLimit.set(request, err);
        return;
      }
      throw err;
    }
    peers.set(request, peer);
    // A peer that calls is up: events waiting for it need not wait for their backoff.
    ctx.federation.events?.peerSeen(peer.serverId);
  };
}

/**
 * The server-to-server routes under /s2s/v1 (docs/federation.md): `forward/*` runs a relayed
 * device request here through `app` (the whole HTTP app, as the person from the relay);
 * `revocations` takes a relay's revocation; `ping` answers who called (for operators and tests).
 */
export function s2sRoutes(app: FastifyInstance): S2sRoutes {
  return (s2s: FastifyInstance, ctx: AppContext) => {
    const run: LocalRunner = async (r) => {
      const res = await app.inject({
        remoteAddress: RELAYED_ADDRESS,
        method: r.method,
        url: r.url,
        headers: r.headers,
        payload: r.method === 'POST' ? r.body : undefined,
      });
      return { status: res.statusCode, headers: res.headers, body: res.rawPayload };
    };
    s2s.get('/ping', async (request) => ({
      server: ctx.federation.service.selfId,
      peer: peers.get(request)?.serverId,
    }));
    s2s.route({
      method: ['GET', 'POST'],
      url: '/forward/*',
      handler: async (request, reply) => {
        const limited = overLimit.get(request);
        if (limited) {
          const answer = ctx.federation.service.hostOverLimit(
            request.headers,
            Number(limited.extensions.retryAfterSeconds ?? 60),
            limited.message,
          );
          return reply.code(answer.status).headers(answer.headers).send(answer.body);
        }
        const peer = peers.get(request)!;
        const query = request.url.includes('?') ? request.url.slice(request.url.indexOf('?')) : '';
        const tail = `/${(request.params as { '*': string })['*']}${query}`;
        const answer = await ctx.federation.service.host(
          {
            peer,
            method: request.method as 'GET' | 'POST',
            tail,
            headers: request.headers,
            body: bodyOf(request),
          },
          run,
        );
        return reply.code(answer.status).headers(answer.headers).send(answer.body);
      },
    });
    s2s.post('/events', async (request, reply) => {
      const peer = peers.get(request)!;
      const body = jsonOf<{ user?: unknown; events?: unknown } | null>(request);
      if (body === undefined) return reply.code(400).send({ error: 'the body is not JSON' });
      return reply.send(
        await ctx.federation.service.receiveEvents(peer.serverId, {
          user: body?.user,
          events: body?.events,
        }),
      );
    });
    s2s.post('/revocations', async (request, reply) => {
      const peer = peers.get(request)!;
      const body = jsonOf<{ statement?: unknown; signature?: unknown } | null>(request);
      if (body === undefined) return reply.code(400).send({ error: 'the body is not JSON' });
      const result = await ctx.federation.revocations.applyRevocationStatement(
        { statement: body?.statement, signature: body?.signature },
        peer.serverId,
      );
      return reply.send(result);
    });
  };
}
