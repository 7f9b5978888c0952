import type { Readable } from 'node:stream';
import zlib from 'node:zlib';

import { Agent, errors as undiciErrors } from 'undici';

import {
  publicConnect,
  RefusedAddressError,
  systemResolve,
  type Resolve,
} from './public-connector.js';

export { RefusedAddressError, type Resolve } from './public-connector.js';

// Outbound HTTP for content named by users (link previews): only public addresses, checked on
// the address each connection actually goes to (public-connector.ts; docs/link-previews.md).

export interface SafeFetchOptions {
  /** Whole-fetch budget: connect, redirects, headers and body (default 5 s). */
  timeoutMs?: number;
  /** Redirects followed (default 5). */
  maxRedirects?: number;
  /** Decoded body bytes read; a longer body is `tooLarge` (default 1 MiB). */
  maxBodyBytes?: number;
  /** Response header bytes (default 16 KiB); larger headers fail the fetch. */
  maxHeaderBytes?: number;
  /** The resolver (tests point it at their own DNS server); default the system's. */
  resolve?: Resolve;
  /** `User-Agent` sent. */
  userAgent?: string;
}

export type SafeFetchResult =
  | {
      ok: true;
      /** The URL of the last response, after redirects. */
      url: string;
      status: number;
      headers: Record<string, string>;
      body: Buffer;
    }
  | { ok: false; reason: SafeFetchFailure; detail?: string };

export type SafeFetchFailure =
  | 'badUrl'
  | 'refusedAddress'
  | 'dns'
  | 'timeout'
  | 'tooManyRedirects'
  | 'tooLarge'
  | 'headersTooLarge'
  | 'network'
  | 'aborted';

class TooLargeError extends Error {}

/** How long an idle connection to a fetched host stays open for the next fetch to reuse. */
export const KEEP_ALIVE_MS = 2000;

/**
 * GET with every safeguard a server fetching user-named URLs needs: http(s) only, no URL
 * credentials sent, redirects followed by hand (at most `maxRedirects`, each checked again), a
 * connector of its own that resolves the name itself, refuses it when any answer is special-use
 * and connects to the checked address (so a second DNS answer cannot be slipped in: DNS
 * rebinding), then checks the peer of the socket once more; a time budget for everything;
 * headers and decoded body capped (gzip, deflate and br decoded as they arrive). Proxy variables
 * are never read: the `Agent` is ours, not undici's environment-proxy one.
 */
export class SafeFetch {
  private readonly agent: Agent;
  private readonly opts: Required<Omit<SafeFetchOptions, 'resolve'>> & { resolve: Resolve };

  constructor(options: SafeFetchOptions = {}) {
    this.opts = {
      timeoutMs: options.timeoutMs ?? 5000,
      maxRedirects: options.maxRedirects ?? 5,
      maxBodyBytes: options.maxBodyBytes ?? 1024 * 1024,
      maxHeaderBytes: options.maxHeaderBytes ?? 16 * 1024,
      resolve: options.resolve ?? systemResolve,
      userAgent: options.userAgent ?? 'svc-link-preview',
    };
    this.agent = new Agent({
      connect: publicConnect({ timeoutMs: this.opts.timeoutMs, resolve: this.opts.resolve }),
      maxHeaderSize: this.opts.maxHeaderBytes,
      headersTimeout: this.opts.timeoutMs,
      bodyTimeout: this.opts.timeoutMs,
      // Every connection is checked when it is made (publicConnect), and a fetch to an origin
      // whose connection is still open reuses it (the same checked address, no new lookup). An
      // idle connection closes after two seconds, so none stays open to a stranger for long.
      // Closing after each fetch cost about 0.3 ms of the event loop per page (a new lookup and
      // connection, and undici's 'reset' and 'destroyed' errors with their stack traces).
      keepAliveTimeout: KEEP_ALIVE_MS,
      keepAliveMaxTimeout: KEEP_ALIVE_MS,
    });
  }

  /** Fetches `url`; never throws for a refused or failed fetch, it answers why. */
  async get(
    url: string,
    opts: { accept?: string; signal?: AbortSignal } = {},
  ): Promise<SafeFetchResult> {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(new Error('timeout')), this.opts.timeoutMs);
    const onAbort = () => controller.abort(new Error('aborted'));
    if (opts.signal?.aborted) onAbort();
    else opts.signal?.addEventListener('abort', onAbort, { once: true });
    try {
      return await this.follow(url, opts.accept, controller.signal);
    } catch (err) {
      return this.failure(err, controller.signal);
    } finally {
      clearTimeout(timer);
      opts.signal?.removeEventListener('abort', onAbort);
    }
  }

  async close(): Promise<void> {
    await this.agent.close();
  }

  private async follow(
    start: string,
    accept: string | undefined,
    signal: AbortSignal,
  ): Promise<SafeFetchResult> {
    let current = start;
    for (let hop = 0; ; hop++) {
      let url: URL;
      try {
        url = new URL(current);
      } catch {
        return { ok: false, reason: 'badUrl' };
      }
      if (url.protocol !== 'http:' && url.protocol !== 'https:') {
        return { ok: false, reason: 'badUrl', detail: url.protocol };
      }
      url.username = '';
      url.password = '';
      url.hash = '';
      const res = await this.agent.request({
        origin: url.origin,
        path: `${url.pathname}${url.search}`,
        method: 'GET',
        headers: {
          'user-agent': this.opts.userAgent,
          accept: accept ?? '*/*',
          'accept-encoding': 'gzip, deflate, br',
        },
        signal,
      });
      if (res.statusCode >= 300 && res.statusCode < 400 && res.headers.location !== undefined) {
        res.body.resume();
        res.body.on('error', () => {});
        if (hop >= this.opts.maxRedirects) return { ok: false, reason: 'tooManyRedirects' };
        const location = Array.isArray(res.headers.location)
          ? res.headers.location[0]
          : res.headers.location;
        try {
          current = new URL(location ?? '', url).toString();
        } catch {
          return { ok: false, reason: 'badUrl' };
        }
        continue;
      }
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(res.headers)) {
        if (v !== undefined) headers[k] = Array.isArray(v) ? v.join(', ') : v;
      }
      const body = await this.readBody(res.body, headers['content-encoding'], signal);
      return { ok: true, url: url.toString(), status: res.statusCode, headers, body };
    }
  }

  /** Reads the body decoded, stopping past the cap (a gzip bomb stops at the cap too). */
  private async readBody(
    raw: Readable,
    encoding: string | undefined,
    signal: AbortSignal,
  ): Promise<Buffer> {
    const coding = (encoding ?? '').trim().toLowerCase();
    let stream: Readable = raw;
    if (coding === 'gzip' || coding === 'x-gzip') stream = raw.pipe(zlib.createGunzip());
    else if (coding === 'deflate') stream = raw.pipe(zlib.createInflate());
    else if (coding === 'br') stream = raw.pipe(zlib.createBrotliDecompress());
    else if (coding !== '' && coding !== 'identity') {
      raw.destroy();
      throw new Error(`unsupported content-encoding ${coding}`);
    }
    if (stream !== raw) raw.on('error', (err) => stream.destroy(err));
    const chunks: Buffer[] = [];
    let size = 0;
    try {
      for await (const chunk of stream) {
        if (signal.aborted) throw signal.reason;
        const buf = chunk as Buffer;
        size += buf.length;
        if (size > this.opts.maxBodyBytes) throw new TooLargeError();
        chunks.push(buf);
      }
    } finally {
      stream.destroy();
      raw.destroy();
    }
    return Buffer.concat(chunks);
  }

  private failure(err: unknown, signal: AbortSignal): SafeFetchResult {
    const reasonOf = (e: unknown): SafeFetchResult | null => {
      if (e instanceof RefusedAddressError) {
        return { ok: false, reason: 'refusedAddress', detail: e.message };
      }
      if (e instanceof TooLargeError) return { ok: false, reason: 'tooLarge' };
      if (e instanceof undiciErrors.HeadersOverflowError) {
        return { ok: false, reason: 'headersTooLarge' };
      }
      return null;
    };
    const known = reasonOf(err) ?? reasonOf((err as { cause?: unknown } | null)?.cause);
    if (known) return known;
    if (signal.aborted) {
      const why = (signal.reason as Error | undefined)?.message;
      return { ok: false, reason: why === 'timeout' ? 'timeout' : 'aborted' };
    }
    if (
      err instanceof undiciErrors.HeadersTimeoutError ||
      err instanceof undiciErrors.BodyTimeoutError ||
      err instanceof undiciErrors.ConnectTimeoutError
    ) {
      return { ok: false, reason: 'timeout' };
    }
    const code = (err as { code?: unknown } | null)?.code;
    if (code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'ENODATA') {
      return { ok: false, reason: 'dns' };
    }
    return { ok: false, reason: 'network', detail: String((err as Error)?.message ?? err) };
  }
}
