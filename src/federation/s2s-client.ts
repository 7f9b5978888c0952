import { randomBytes } from 'node:crypto';

import { Agent, request } from 'undici';

import type { Clock } from '../lib/clock.js';
import { publicConnect } from '../net/public-connector.js';
import type { ServerKeys } from '../services/instance/index.js';

import { contentDigest, signMessage, type SignatureInput } from './http-signature.js';

/** Path prefix of the server-to-server API (contract: Versioning). */
export const S2S_PATH = '/s2s/v1/';
/** Largest answer read from a peer: the relay's body limit. */
export const MAX_PEER_BODY = 32 * 1024 * 1024;
/** The signature label this server signs with. */
export const SIGNATURE_LABEL = 'svc';
/** The `tag` parameter of this profile's signatures. */
export const SIGNATURE_TAG = 'svc-s2s-v1';

/** Header fields a signature covers whenever the request has them. */
export const COVERED_IF_PRESENT = [
  'content-type',
  'svc-device-request',
  'svc-device-signature',
  'svc-relay-vouch',
] as const;

/** Why a peer gave no usable answer; the relay maps every one to 502 upstream_unavailable. */
export class UpstreamError extends Error {
  constructor(
    readonly serverId: string,
    readonly reason: 'refused' | 'unreachable' | 'timeout' | 'too_large' | 'bad_answer',
    detail: string,
  ) {
    super(`${serverId}: ${reason}: ${detail}`);
    this.name = 'UpstreamError';
  }
}

export interface PeerAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

export interface S2sClientOptions {
  /** This server's id (host[:port] of SVC_PUBLIC_BASE_URL). */
  selfId: string;
  keys: ServerKeys;
  clock: Clock;
  /** Time for a whole call: connect, headers and body (SVC_S2S_TIMEOUT_MS). */
  timeoutMs: number;
  /** Development only: peers over http:// and at loopback or private addresses. */
  insecure: boolean;
}

/**
 * Outgoing server-to-server HTTP: every call to /s2s/v1 signed (RFC 9421, this server's
 * profile, docs/federation.md), a time budget for the whole call, a capped answer, and unless
 * `insecure` only https to public addresses (a host id comes from a client's URL, so it must
 * not reach inward). Proxy variables are never read. Never throws anything but UpstreamError.
 */
export class S2sClient {
  private readonly agent: Agent;

  constructor(private readonly opts: S2sClientOptions) {
    this.agent = new Agent({
      connect: publicConnect({ timeoutMs: opts.timeoutMs, allowPrivate: opts.insecure }),
      headersTimeout: opts.timeoutMs,
      bodyTimeout: opts.timeoutMs,
    });
  }

  get selfId(): string {
    return this.opts.selfId;
  }

  /** The origin of a peer named by its server id. */
  originOf(serverId: string): string {
    return `${this.opts.insecure ? 'http' : 'https'}://${serverId}`;
  }

  /** Unsigned GET of a peer's discovery document. */
  async discovery(serverId: string): Promise<unknown> {
    const answer = await this.send(serverId, {
      method: 'GET',
      url: `${this.originOf(serverId)}/.well-known/svc-server`,
      headers: { accept: 'application/json' },
      body: null,
    });
    if (answer.status !== 200) {
      throw new UpstreamError(serverId, 'bad_answer', `discovery answered ${answer.status}`);
    }
    try {
      return JSON.parse(answer.body.toString('utf8')) as unknown;
    } catch {
      throw new UpstreamError(serverId, 'bad_answer', 'discovery is not JSON');
    }
  }

  /** A signed call to `path` under /s2s/v1/ of a peer. */
  async call(
    serverId: string,
    input: {
      method: 'GET' | 'POST';
      path: string;
      headers?: Record<string, string>;
      body?: Buffer | null;
    },
  ): Promise<PeerAnswer> {
    const url = `${this.originOf(serverId)}${S2S_PATH}${input.path.replace(/^\/+/, '')}`;
    const headers = this.signedHeaders(input.method, url, input.headers ?? {}, input.body ?? null);
    return this.send(serverId, { method: input.method, url, headers, body: input.body ?? null });
  }

  /**
   * The headers of a signed request: Date, Content-Digest, then Signature-Input and Signature
   * over method, target URI, digest, date and any covered svc header (docs/federation.md).
   */
  signedHeaders(
    method: string,
    url: string,
    given: Record<string, string>,
    body: Buffer | null,
  ): Record<string, string> {
    const now = this.opts.clock.now();
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(given)) headers[k.toLowerCase()] = v;
    headers.date = now.toUTCString();
    headers['content-digest'] = contentDigest(body ?? Buffer.alloc(0));
    const components = ['@method', '@target-uri', 'content-digest', 'date'];
    for (const name of COVERED_IF_PRESENT) if (headers[name] !== undefined) components.push(name);
    const created = Math.floor(now.getTime() / 1000);
    const input: SignatureInput = {
      components,
      params: [
        ['created', created],
        ['expires', created + 300],
        ['nonce', randomBytes(16).toString('base64url')],
        ['keyid', `${this.opts.selfId}#${this.opts.keys.signingPublicRaw}`],
        ['alg', 'ed25519'],
        ['tag', SIGNATURE_TAG],
      ],
    };
    const sig = signMessage(
      { method, url, headers },
      input,
      this.opts.keys.signing,
      SIGNATURE_LABEL,
    );
    return { ...headers, ...sig };
  }

  private async send(
    serverId: string,
    r: { method: string; url: string; headers: Record<string, string>; body: Buffer | null },
  ): Promise<PeerAnswer> {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), this.opts.timeoutMs);
    try {
      const res = await request(r.url, {
        method: r.method as 'GET' | 'POST',
        headers: r.headers,
        body: r.body ?? undefined,
        dispatcher: this.agent,
        signal: controller.signal,
        maxRedirections: 0,
      } as Parameters<typeof request>[1]);
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of res.body as AsyncIterable<Buffer>) {
        size += chunk.length;
        if (size > MAX_PEER_BODY) {
          res.body.destroy();
          throw new UpstreamError(serverId, 'too_large', 'the answer is over 32 MiB');
        }
        chunks.push(chunk);
      }
      return { status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks) };
    } catch (err) {
      if (err instanceof UpstreamError) throw err;
      if (controller.signal.aborted) {
        throw new UpstreamError(serverId, 'timeout', `no answer within ${this.opts.timeoutMs} ms`);
      }
      const e = err as { code?: string; message?: string };
      if (e.code === 'UND_ERR_HEADERS_TIMEOUT' || e.code === 'UND_ERR_BODY_TIMEOUT') {
        throw new UpstreamError(serverId, 'timeout', `no answer within ${this.opts.timeoutMs} ms`);
      }
      if (e.code === 'SVC_REFUSED_ADDRESS') {
        throw new UpstreamError(serverId, 'refused', e.message ?? 'refused address');
      }
      throw new UpstreamError(serverId, 'unreachable', e.message ?? String(err));
    } finally {
      clearTimeout(timer);
    }
  }

  async close(): Promise<void> {
    await this.agent.close();
  }
}
