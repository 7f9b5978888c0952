import { createPublicKey } from 'node:crypto';

import type { Logger } from 'pino';

import type { Db } from '../db/database.js';
import { isUniqueViolation } from '../db/errors.js';
import type { AppError } from '../errors.js';
import { forbidden, rateLimited, unauthenticated } from '../errors.js';
import type { Clock } from '../lib/clock.js';
import type { TokenBucketLimiter } from '../lib/token-bucket.js';
import { parsePrincipal } from '../services/principals/index.js';

import {
  digestMatches,
  param,
  parseSignatureField,
  parseSignatureInputField,
  SignatureFormatError,
  verifySignature,
  type HttpMessage,
  type SignatureInput,
} from './http-signature.js';
import { PeerKeyError, type PeerDirectory } from './peers.js';
import { insertNonce } from './queries.js';
import { COVERED_IF_PRESENT, SIGNATURE_TAG } from './s2s-client.js';

/** How far a signature's `created` (and `Date`) may be from this server's clock. */
export const SIGNATURE_WINDOW_SECONDS = 300;
/** Components every call's signature must cover (docs/federation.md, "Signature profile"). */
export const REQUIRED_COMPONENTS = ['@method', '@target-uri', 'content-digest', 'date'];

/** Why a call was refused; the peer sees a generic message, the log this reason. */
export type RefusalReason =
  | 'unsigned'
  | 'malformed'
  | 'stale'
  | 'bad_digest'
  | 'unknown_key'
  | 'bad_signature'
  | 'replayed'
  | 'blocked'
  | 'rate_limited';

export interface IncomingCall {
  method: string;
  /** Path and query as received. */
  url: string;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

export interface VerifiedPeer {
  serverId: string;
  key: string;
}

/**
 * Verifies a call to /s2s/v1 before any handler runs: an RFC 9421 signature in this server's
 * profile (Ed25519; method, target URI, content digest and date covered, and every svc header
 * the call carries; `created` within five minutes; `keyid` naming the peer and its key; a
 * `nonce` never seen before), from a peer no `server:` principal block covers, within the peer's
 * SVC_S2S_PEER_RATE_PER_MIN (only verified calls count). Throws an AppError: 401 for a bad
 * signature, 403 blocked, 429.
 */
export class S2sVerifier {
  constructor(
    private readonly deps: {
      db: Db;
      clock: Clock;
      log: Logger;
      peers: PeerDirectory;
      /** This server's origin (SVC_PUBLIC_BASE_URL), for the target URI. */
      origin: string;
      limiter: TokenBucketLimiter | null;
      isServerBlocked: (serverId: string) => Promise<boolean>;
    },
  ) {}

  async verify(call: IncomingCall): Promise<VerifiedPeer> {
    const headerOf = (name: string) => {
      const v = call.headers[name];
      return Array.isArray(v) ? v.join(', ') : v;
    };
    const inputField = headerOf('signature-input');
    const sigField = headerOf('signature');
    if (!inputField || !sigField) throw this.refuse('unsigned', null, 'no Signature-Input');
    let inputs: Map<string, SignatureInput>;
    let sigs: Map<string, Buffer>;
    try {
      inputs = parseSignatureInputField(inputField);
      sigs = parseSignatureField(sigField);
    } catch (err) {
      const detail = err instanceof SignatureFormatError ? err.message : 'unparsable';
      throw this.refuse('malformed', null, detail);
    }
    // The one signature of this profile: the member whose tag is ours.
    const found = [...inputs].find(([, i]) => param(i, 'tag') === SIGNATURE_TAG);
    if (!found) throw this.refuse('unsigned', null, `no signature tagged ${SIGNATURE_TAG}`);
    const [label, input] = found;
    const signature = sigs.get(label);
    if (!signature) throw this.refuse('malformed', null, `no Signature member ${label}`);

    const keyid = param(input, 'keyid');
    const created = param(input, 'created');
    const expires = param(input, 'expires');
    const nonce = param(input, 'nonce');
    const alg = param(input, 'alg');
    if (typeof keyid !== 'string' || typeof created !== 'number' || typeof nonce !== 'string') {
      throw this.refuse('malformed', null, 'keyid, created and nonce are required');
    }
    if (alg !== undefined && alg !== 'ed25519') throw this.refuse('malformed', null, `alg ${alg}`);
    if (nonce.length < 16 || nonce.length > 128) throw this.refuse('malformed', null, 'nonce');
    const hash = keyid.indexOf('#');
    const serverId = (hash === -1 ? keyid : keyid.slice(0, hash)).toLowerCase();
    const keyInId = hash === -1 ? null : keyid.slice(hash + 1);
    try {
      if (parsePrincipal(`server:${serverId}`).kind !== 'server') throw new Error('not a host');
    } catch {
      throw this.refuse('malformed', null, `keyid ${keyid} names no server`);
    }
    for (const c of REQUIRED_COMPONENTS) {
      if (!input.components.includes(c))
        throw this.refuse('malformed', serverId, `${c} not covered`);
    }
    for (const h of COVERED_IF_PRESENT) {
      if (call.headers[h] !== undefined && !input.components.includes(h)) {
        throw this.refuse('malformed', serverId, `${h} is present but not covered`);
      }
    }

    // A blocked peer is refused before any key fetch or signature check.
    if (await this.deps.isServerBlocked(serverId)) throw this.refuse('blocked', serverId, '');

    const nowMs = this.deps.clock.now().getTime();
    const now = Math.floor(nowMs / 1000);
    if (Math.abs(now - created) > SIGNATURE_WINDOW_SECONDS) {
      throw this.refuse('stale', serverId, `created ${created}, now ${now}`);
    }
    if (typeof expires === 'number' && expires < now) {
      throw this.refuse('stale', serverId, `expired at ${expires}`);
    }
    const date = Date.parse(headerOf('date') ?? '');
    if (!Number.isFinite(date) || Math.abs(nowMs - date) > SIGNATURE_WINDOW_SECONDS * 1000) {
      throw this.refuse('stale', serverId, `date ${headerOf('date')}`);
    }
    if (!digestMatches(headerOf('content-digest'), call.body)) {
      throw this.refuse('bad_digest', serverId, 'Content-Digest does not match the body');
    }

    let key: string;
    try {
      key = (await this.deps.peers.keyOf(serverId, keyInId)).key;
    } catch (err) {
      if (err instanceof PeerKeyError) throw this.refuse('unknown_key', serverId, err.message);
      throw err;
    }
    const message: HttpMessage = {
      method: call.method,
      url: new URL(call.url, this.deps.origin).toString(),
      headers: call.headers,
    };
    const publicKey = createPublicKey({
      key: { kty: 'OKP', crv: 'Ed25519', x: key },
      format: 'jwk',
    });
    if (!verifySignature(message, input, signature, publicKey)) {
      throw this.refuse('bad_signature', serverId, 'the signature does not verify');
    }
    try {
      await insertNonce(this.deps.db.kysely, {
        scope: `server:${serverId}`,
        nonce,
        expiresAt: (created + SIGNATURE_WINDOW_SECONDS * 2) * 1000,
      });
    } catch (err) {
      if (isUniqueViolation(err)) throw this.refuse('replayed', serverId, `nonce ${nonce}`);
      throw err;
    }
    // Counted only once the peer is proven: calls that merely name a peer (forged, or
    // replayed) must not use up that peer's allowance.
    if (this.deps.limiter) {
      const taken = this.deps.limiter.take(serverId);
      if (!taken.ok) throw this.refuse('rate_limited', serverId, '', taken.retryAfterSeconds);
    }
    return { serverId, key };
  }

  private refuse(
    reason: RefusalReason,
    serverId: string | null,
    detail: string,
    retryAfterSeconds?: number,
  ): AppError {
    this.deps.log.warn({ peer: serverId, reason, detail }, 's2s call refused');
    if (reason === 'blocked') return forbidden('this server does not accept calls from yours');
    if (reason === 'rate_limited') {
      return rateLimited(retryAfterSeconds ?? 60, 'too many calls from your server');
    }
    return unauthenticated('the request signature was not accepted');
  }
}
