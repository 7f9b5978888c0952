import type { FastifyInstance } from 'fastify';

import type { Config } from '../../config/index.js';
import { clientAddress } from '../../lib/address.js';

/** Works out the client address and protocol once, before every other hook. */
export function registerRequestContext(app: FastifyInstance, config: Config): void {
  const trust = config.http.trustForwardedHeaders;
  app.decorateRequest('svc', null as never);
  app.addHook('onRequest', async (request) => {
    const forwardedProto = trust ? firstHeader(request.headers['x-forwarded-proto']) : undefined;
    const forwardedParam = trust
      ? /proto=(https?)/i.exec(firstHeader(request.headers.forwarded) ?? '')?.[1]
      : undefined;
    const proto = (forwardedParam ?? forwardedProto ?? request.protocol).toLowerCase();
    request.svc = {
      clientAddress: clientAddress({
        peer: request.socket.remoteAddress,
        trustForwarded: trust,
        forwarded: request.headers.forwarded,
        xForwardedFor: request.headers['x-forwarded-for'],
      }),
      protocol: proto === 'https' ? 'https' : 'http',
      session: null,
      sessionToken: null,
    };
  });
}

export function firstHeader(value: string | string[] | undefined): string | undefined {
  if (Array.isArray(value)) return value[0];
  return value;
}

/** The origin a request addressed: scheme and Host, or the trusted proxy's forwarded values. */
export function requestOrigin(
  headers: Record<string, string | string[] | undefined>,
  protocol: 'http' | 'https',
  trustForwarded: boolean,
): string | null {
  const host =
    (trustForwarded ? firstHeader(headers['x-forwarded-host']) : undefined) ??
    firstHeader(headers.host);
  if (!host) return null;
  return `${protocol}://${host.split(',')[0]?.trim()}`;
}
