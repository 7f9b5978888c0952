import type { FastifyInstance } from 'fastify';

import type { AppContext } from '../../context.js';
import type { Signed } from '../../federation/key-log.js';
import { signBytes } from '../../services/instance/index.js';
import { requestOrigin } from '../admission.js';

export const DISCOVERY_PATH = '/.well-known/svc-server';

export type { Signed };

/**
 * GET /.well-known/svc-server (docs/discovery.md): the `server-discovery` marker, the signed key
 * log, the signed descriptor and the unsigned, advisory feature states.
 */
export function registerDiscovery(app: FastifyInstance, ctx: AppContext): void {
  const cache = new Map<string, string>();
  let cachedKey = '';
  app.get(DISCOVERY_PATH, async (request, reply) => {
    // A rotation (svc server-key rotate, maybe in another process) shows within seconds.
    await ctx.federation.keyLog.refresh();
    if (cachedKey !== ctx.keys.signingPublicRaw) {
      cache.clear();
      cachedKey = ctx.keys.signingPublicRaw;
    }
    const origin =
      ctx.config.server.publicBaseUrl !== null
        ? new URL(ctx.config.server.publicBaseUrl).origin
        : (requestOrigin(
            request.headers,
            request.svc.protocol,
            ctx.config.http.trustForwardedHeaders,
          ) ?? '');
    let body = cache.get(origin);
    if (!body) {
      body = JSON.stringify(discoveryDocument(ctx, origin));
      if (cache.size < 16) cache.set(origin, body);
    }
    reply.header('access-control-allow-origin', '*');
    reply.header('cache-control', 'public, max-age=300');
    reply.type('application/json');
    return reply.send(body);
  });
}

export function discoveryDocument(ctx: AppContext, origin: string) {
  const keys = ctx.keys;
  const keyCreated = new Date(ctx.keyCreatedAt).toISOString();
  const descriptor = {
    type: 'svc.server-descriptor.v1',
    origin,
    // The id peers know this server by (the `server:` principal, the relay route's host id).
    serverId: origin ? new URL(origin).host.toLowerCase() : null,
    key: keys.signingPublicRaw,
    roles: ctx.config.server.role === 'both' ? ['relay', 'host'] : [ctx.config.server.role],
    apiVersion: 1,
    version: ctx.version,
    s2s: '/s2s/v1/',
    issuedAt: keyCreated,
  };
  return {
    svc: 'server-discovery',
    keyLog: ctx.federation.keyLog.entries(),
    descriptor: sign(ctx, descriptor),
    features: Object.fromEntries(
      ctx.config.features.map((f) => [
        f.key,
        f.state === 'unavailable' ? { state: f.state, reason: f.reason } : { state: f.state },
      ]),
    ),
  };
}

function sign(ctx: AppContext, value: object): Signed {
  const payload = JSON.stringify(value);
  return { payload, signature: signBytes(ctx.keys, Buffer.from(payload, 'utf8')) };
}
