import type { IncomingHttpHeaders } from 'node:http';

import type { Config } from '../config/index.js';
import { CidrSet, clientAddress, normalizeCidr, rateLimitKey } from '../lib/address.js';
import { firstHeader } from '../lib/headers.js';
import type { TokenBucketLimiter } from '../lib/token-bucket.js';

import { buildOriginPolicy, originAllowed, type OriginPolicy } from './origins.js';

/**
 * Which rules a request is admitted under, decided by the route tree that matched it (not by
 * the raw path, which may be percent-encoded: `/%61pi` routes to `/api`).
 * - `api`: routes under /api and the WebSocket upgrade: deny list, address bucket, origin.
 * - `s2s`: /s2s/v1: deny list only (a per-peer limit runs after the signature is verified).
 * - `public`: /readyz, discovery and paths no tree claims: deny list only.
 * - `health`: /healthz, which even a denied address may reach.
 */
export type Zone = 'api' | 's2s' | 'public' | 'health';

/** What admission needs of a request or an upgrade, both from node's IncomingMessage. */
export interface AdmissionInput {
  /** The TCP peer's address. */
  peer: string | undefined;
  /** Whether the connection is TLS. */
  encrypted: boolean;
  headers: IncomingHttpHeaders;
}

export interface Admitted {
  ok: true;
  /** The TCP peer, or with SVC_TRUST_FORWARDED_HEADERS the client the proxy names. */
  clientAddress: string;
  /** `https` or `http` as the client sees it (a trusted proxy may say). */
  protocol: 'http' | 'https';
  /** The request's Origin when it is a cross-origin caller allowed under /api; else null. */
  corsOrigin: string | null;
}

export interface Refusal {
  ok: false;
  status: 400 | 403 | 429;
  /** The JSON body of the refusal (contract: Refusals before a route runs). */
  body: Readonly<Record<string, unknown>>;
  /** Sent as `Retry-After` with a 429. */
  retryAfterSeconds: number | null;
}

const BLOCKED: Refusal = Object.freeze({
  ok: false,
  status: 403,
  body: Object.freeze({ error: 'blocked' }),
  retryAfterSeconds: null,
});

/**
 * The one admission path of the API port (contract: Limits, Origins, Refusals before a route
 * runs): the client address and protocol, the operator's deny list, the per-address bucket with
 * its exemptions, and the origin. Fastify's onRequest hooks and the WebSocket upgrade both call
 * `admit`, so an upgrade is refused exactly as a request would be. Runs on every request: it
 * allocates the answer and nothing else unless a header asks for more work.
 */
/**
 * The client address of a request a host runs for a relay (federation's `app.inject`): the
 * discard-only prefix of RFC 6666, which no real client has. Such requests skip the per-address
 * bucket: the relay's signed call was already counted by SVC_S2S_PEER_RATE_PER_MIN.
 */
export const RELAYED_ADDRESS = '100::1';

export class Admission {
  private readonly trustForwarded: boolean;
  private readonly exempt: CidrSet;
  private readonly originPolicy: OriginPolicy;

  constructor(
    config: Config,
    private readonly denied: { isBlocked(address: string): boolean },
    /** SVC_RATE_REQUESTS_PER_MIN_PER_IP's bucket, or null when the limit is off. */
    private readonly addresses: TokenBucketLimiter | null,
  ) {
    this.trustForwarded = config.http.trustForwardedHeaders;
    this.exempt = new CidrSet(
      config.rates.exemptAddresses
        .map((a) => normalizeCidr(a)?.cidr)
        .filter((c): c is string => !!c),
    );
    this.originPolicy = buildOriginPolicy(
      config.server.publicBaseUrl,
      config.http.corsAllowedOrigin,
    );
  }

  admit(input: AdmissionInput, zone: Zone): Admitted | Refusal {
    const { headers } = input;
    const trust = this.trustForwarded;
    const address = clientAddress({
      peer: input.peer,
      trustForwarded: trust,
      forwarded: headers.forwarded,
      xForwardedFor: headers['x-forwarded-for'],
    });
    const protocol = requestProtocol(input, trust);
    if (zone === 'health') return { ok: true, clientAddress: address, protocol, corsOrigin: null };
    if (this.denied.isBlocked(address)) return BLOCKED;
    if (zone !== 'api') return { ok: true, clientAddress: address, protocol, corsOrigin: null };

    if (this.addresses && !this.exempt.has(address) && input.peer !== RELAYED_ADDRESS) {
      const taken = this.addresses.take(rateLimitKey(address));
      if (!taken.ok) {
        const retryAfterSeconds = taken.retryAfterSeconds;
        return {
          ok: false,
          status: 429,
          body: { error: 'rate_limited', retryAfterSeconds },
          retryAfterSeconds,
        };
      }
    }
    const origin = firstHeader(headers.origin);
    if (origin === undefined)
      return { ok: true, clientAddress: address, protocol, corsOrigin: null };
    if (!originAllowed(this.originPolicy, origin, requestOrigin(headers, protocol, trust))) {
      return {
        ok: false,
        status: 400,
        body: {
          error: 'origin_not_allowed',
          message: `requests from origin ${origin.slice(0, 200)} are not accepted by this server`,
        },
        retryAfterSeconds: null,
      };
    }
    return { ok: true, clientAddress: address, protocol, corsOrigin: origin };
  }
}

/** `https` or `http`: the connection's, or the trusted proxy's `Forwarded`/`X-Forwarded-Proto`. */
function requestProtocol(input: AdmissionInput, trust: boolean): 'http' | 'https' {
  if (trust) {
    const forwarded = firstHeader(input.headers.forwarded);
    const param = forwarded === undefined ? undefined : /proto=(https?)/i.exec(forwarded)?.[1];
    const proto = param ?? firstHeader(input.headers['x-forwarded-proto']);
    if (proto) return proto.trim().toLowerCase() === 'https' ? 'https' : 'http';
  }
  return input.encrypted ? 'https' : 'http';
}

/** The origin a request addressed: scheme and Host, or the trusted proxy's forwarded values. */
export function requestOrigin(
  headers: IncomingHttpHeaders,
  protocol: 'http' | 'https',
  trustForwarded: boolean,
): string | null {
  const host =
    (trustForwarded ? firstHeader(headers['x-forwarded-host']) : undefined) ??
    firstHeader(headers.host);
  if (!host) return null;
  return `${protocol}://${host.split(',')[0]?.trim()}`;
}
