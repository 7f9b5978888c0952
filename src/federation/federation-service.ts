import type { Logger } from 'pino';

import type { Config } from '../config/index.js';
import { assertRole, hasRole } from '../config/roles.js';
import type { Db } from '../db/database.js';
import type { EventPort } from '../events/port.js';
import { userTopic } from '../events/catalog.js';
import { lookupKey, findAccountByUsernameKey } from '../services/accounts/index.js';
import { isUniqueViolation } from '../db/errors.js';
import { AppError } from '../errors.js';
import type { Clock } from '../lib/clock.js';
import type { ServerKeys } from '../services/instance/index.js';
import type { SessionInfo } from '../auth/session.js';
import type { KeysetArgs } from '../services/paging/index.js';
import type { SessionService } from '../services/sessions/index.js';

import {
  decodeStatement,
  DEVICE_REQUEST,
  DEVICE_SIGNATURE,
  encodeStatement,
  hostResponseHeaders,
  hostResponseVerifies,
  HOST_RESPONSE,
  HOST_SIGNATURE,
  RELAY_VOUCH,
  verifyHeader,
  type DeviceRequest,
  type HostResponse,
  type RelayVouch,
} from './device-request.js';
import type { EventBridge } from './event-bridge.js';
import { EVENT_MAX_AGE_MS, RELAY_EVENT_MEMORY_MS, type RelayedEvent } from './event-delivery.js';
import { contentDigest } from './http-signature.js';
import type { ServerKeyLog } from './key-log.js';
import { PeerKeyError, type PeerDirectory } from './peers.js';
import { hostsOfAccount, insertNonce, insertRelayEvent, insertRelayHost } from './queries.js';
import { checkServerId, RelayRefusal, REMOTE_USER_RE } from './relay-refusal.js';
import { remoteHostsPage } from './remote-hosts.js';
import { remoteAccount, remoteDevice } from './remote-people.js';
import { UpstreamError, type S2sClient } from './s2s-client.js';
import { SIGNATURE_WINDOW_SECONDS, type VerifiedPeer } from './s2s-verifier.js';

/** An HTTP answer passed through: status, the headers that travel, the body. */
export interface ForwardedAnswer {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

/** What the host runs a verified request with: its own app, as the person's session. */
export type LocalRunner = (r: {
  method: 'GET' | 'POST';
  url: string;
  headers: Record<string, string>;
  body: Buffer;
}) => Promise<{ status: number; headers: Record<string, unknown>; body: Buffer }>;

/**
 * Headers of the host's answer that the relay returns unchanged: the contract's (Relay), and a
 * download's name and caching (forwarded attachment and bundle downloads).
 */
const PASSED_HEADERS = [
  'content-type',
  HOST_RESPONSE,
  HOST_SIGNATURE,
  'retry-after',
  'content-disposition',
  'cache-control',
] as const;
/** 502 for a host that gave `what` (no answer, or none the relay could verify). */
const upstreamUnavailable = (host: string, what: string) =>
  new RelayRefusal(502, 'upstream_unavailable', `${host} gave ${what}; try again later`, {
    hostServerId: host,
  });

/** Paths a relayed request may reach on the host: the client API, not the relay route. */
const HOST_PATH_RE = /^\/api(?:$|[/?])/;

/**
 * Federation's rules (docs/federation.md): as a relay, forwarding a signed-in person's device
 * request to a host and passing back only a verified answer; as a host, checking what a relay
 * vouches for and running the request as the person from that relay, whose account mutations
 * answer FORBIDDEN here; revocations in both directions, through the outbox.
 */
export class FederationService {
  /** Host side: a session per remote person, reused while it lives. */
  private readonly remoteSessions = new Map<string, { token: string; csrf: string }>();

  constructor(
    private readonly deps: {
      db: Db;
      clock: Clock;
      log: Logger;
      config: Config;
      keys: ServerKeys;
      keyLog: ServerKeyLog;
      /** Null while federation is off (no SVC_PUBLIC_BASE_URL). */
      selfId: string | null;
      client: S2sClient | null;
      peers: PeerDirectory | null;
      sessions: SessionService;
      isServerBlocked: (serverId: string) => Promise<boolean>;
      events: EventPort;
      /** Host side of relayStream; null while federation is off. */
      bridge: EventBridge | null;
    },
  ) {}

  get selfId(): string | null {
    return this.deps.selfId;
  }

  // ---------------------------------------------------------------- relay side

  /**
   * GET or POST /api/remote/{host}/{tail}: the person's request, forwarded unchanged to the host
   * with this relay's signature and its word for the person's device. Answers the host's answer
   * when the host signed it for this request, else 502 upstream_unavailable.
   */
  async relay(input: {
    session: SessionInfo;
    hostServerId: string;
    method: 'GET' | 'POST';
    tail: string;
    headers: Record<string, string | string[] | undefined>;
    body: Buffer;
  }): Promise<ForwardedAnswer> {
    const { client, peers, selfId } = this.deps;
    if (!client || !peers || !selfId) {
      throw new RelayRefusal(
        403,
        'forbidden',
        'this server does not federate; its operator must set SVC_PUBLIC_BASE_URL',
      );
    }
    if (!hasRole(this.deps.config, 'relay')) {
      throw new RelayRefusal(403, 'forbidden', 'this server is not a relay (SVC_ROLE)');
    }
    const host = checkServerId(input.hostServerId);
    if (host === selfId) {
      throw new RelayRefusal(400, 'validation', 'that is this server; call /api directly');
    }
    if (await this.deps.isServerBlocked(host)) {
      throw new RelayRefusal(403, 'blocked', `this server's operator blocked ${host}`);
    }
    // The host's discovery document, as the relay fetched it: a client verifies its key log and
    // descriptor itself (they are signed by the host), then the host's answers with that key.
    if (input.method === 'GET' && input.tail === '/.well-known/svc-server') {
      try {
        const doc = await client.discovery(host);
        return {
          status: 200,
          headers: { 'content-type': 'application/json; charset=utf-8' },
          body: Buffer.from(JSON.stringify(doc)),
        };
      } catch (err) {
        if (err instanceof UpstreamError) throw upstreamUnavailable(host, 'no discovery document');
        throw err;
      }
    }
    if (!input.session.deviceId) {
      throw new RelayRefusal(
        403,
        'forbidden',
        'sign in with a device key (loginWithKey) to use spaces on other servers',
      );
    }
    const header = (n: string) => {
      const v = input.headers[n];
      return Array.isArray(v) ? v[0] : v;
    };
    const deviceRequest = header(DEVICE_REQUEST);
    const deviceSignature = header(DEVICE_SIGNATURE);
    const statement = decodeStatement<DeviceRequest>(deviceRequest);
    if (!deviceRequest || !deviceSignature || !statement) {
      throw new RelayRefusal(
        400,
        'validation',
        'send Svc-Device-Request and Svc-Device-Signature (docs/federation.md)',
      );
    }
    const deviceKey = await this.deviceKeyOf(input.session.deviceId);
    if (statement.device !== deviceKey) {
      throw new RelayRefusal(403, 'forbidden', 'the request is signed by another device');
    }
    await insertRelayHost(this.deps.db.kysely, {
      accountId: input.session.accountId,
      hostServerId: host,
      firstUsedAt: this.deps.clock.now().getTime(),
    });
    const vouch: RelayVouch = {
      user: input.session.username,
      device: deviceKey,
      displayName: null,
    };
    const headers: Record<string, string> = {
      [DEVICE_REQUEST]: deviceRequest,
      [DEVICE_SIGNATURE]: deviceSignature,
      [RELAY_VOUCH]: encodeStatement(vouch),
    };
    const contentType = header('content-type');
    if (contentType) headers['content-type'] = contentType;
    const unavailable = (why: string) => {
      this.deps.log.warn({ host, why }, 'relay: host gave no verified answer');
      return upstreamUnavailable(host, 'no verified answer');
    };
    let answer;
    try {
      answer = await client.call(host, {
        method: input.method,
        path: `forward${input.tail}`,
        headers,
        body: input.method === 'POST' ? input.body : null,
      });
    } catch (err) {
      if (err instanceof UpstreamError) throw unavailable(err.message);
      throw err;
    }
    const one = (n: string) => {
      const v = answer.headers[n];
      return Array.isArray(v) ? v[0] : v;
    };
    const hostStatement = decodeStatement<HostResponse & { key?: string }>(one(HOST_RESPONSE));
    let hostKey: string;
    try {
      hostKey = (await peers.keyOf(host, hostStatement?.key ?? null)).key;
    } catch (err) {
      if (err instanceof PeerKeyError) throw unavailable(err.message);
      throw err;
    }
    const verified = hostResponseVerifies({
      host,
      hostKey,
      requestNonce: statement.nonce,
      status: answer.status,
      body: answer.body,
      response: one(HOST_RESPONSE),
      signature: one(HOST_SIGNATURE),
    });
    if (!verified) throw unavailable(`answer ${answer.status} is not signed for this request`);
    const out: Record<string, string> = {};
    for (const name of PASSED_HEADERS) {
      const v = one(name);
      if (v !== undefined) out[name] = v;
    }
    return { status: answer.status, headers: out, body: answer.body };
  }

  /**
   * The hosts a person used through this relay (`myRemoteHosts`), first used first, so each of
   * their clients finds the spaces they joined elsewhere. Relay-only.
   */
  async remoteHostsOf(accountId: string, args: KeysetArgs): Promise<string[]> {
    assertRole(this.deps.config, 'relay', 'myRemoteHosts');
    return remoteHostsPage(this.deps.db.kysely, accountId, args);
  }

  private async deviceKeyOf(deviceId: string): Promise<string> {
    const row = await this.deps.db.kysely
      .selectFrom('device')
      .select('publicKey')
      .where('id', '=', deviceId)
      .where('revokedAt', 'is', null)
      .executeTakeFirst();
    if (!row) throw new RelayRefusal(403, 'forbidden', 'this device is revoked');
    return row.publicKey;
  }

  /**
   * /s2s/v1/forward/{tail} from a verified relay: checks the device request against the device
   * key the relay vouches for, then runs it here as the person from that relay. Every answer
   * that can name the device request is signed for it (Svc-Host-Response, Svc-Host-Signature).
   */
  async host(
    input: {
      peer: VerifiedPeer;
      method: 'GET' | 'POST';
      tail: string;
      headers: Record<string, string | string[] | undefined>;
      body: Buffer;
    },
    run: LocalRunner,
  ): Promise<ForwardedAnswer> {
    const header = (n: string) => {
      const v = input.headers[n];
      return Array.isArray(v) ? v[0] : v;
    };
    const deviceHeader = header(DEVICE_REQUEST) ?? '';
    const request = decodeStatement<DeviceRequest>(deviceHeader);
    const nonce = typeof request?.nonce === 'string' ? request.nonce : null;
    const answer = (status: number, error: string, message: string): ForwardedAnswer =>
      this.signed(nonce, {
        status,
        headers: { 'content-type': 'application/json; charset=utf-8' },
        body: Buffer.from(JSON.stringify({ error, message })),
      });
    const refuse = (status: number, error: string, message: string, detail?: string) => {
      this.deps.log.warn(
        { relay: input.peer.serverId, status, error, detail: detail ?? message },
        'host: forwarded request refused',
      );
      return answer(status, error, message);
    };
    const selfId = this.deps.selfId;
    if (!selfId || !hasRole(this.deps.config, 'host')) {
      return refuse(403, 'forbidden', 'this server does not host spaces for other servers');
    }
    const vouch = decodeStatement<RelayVouch>(header(RELAY_VOUCH));
    if (
      !vouch ||
      typeof vouch.user !== 'string' ||
      !REMOTE_USER_RE.test(vouch.user) ||
      typeof vouch.device !== 'string'
    ) {
      return refuse(400, 'validation', 'the relay sent no valid Svc-Relay-Vouch');
    }
    if (!request || typeof nonce !== 'string' || nonce.length < 16 || nonce.length > 128) {
      return refuse(400, 'validation', 'Svc-Device-Request is missing or malformed');
    }
    const issued = Date.parse(request.issuedAt);
    const now = this.deps.clock.now().getTime();
    const problem =
      request.type !== 'svc.device-request.v1'
        ? 'not a device request'
        : request.host !== selfId
          ? `the request is for ${String(request.host)}, not ${selfId}`
          : request.method !== input.method || request.path !== input.tail
            ? 'the request names another method or path'
            : request.digest !== contentDigest(input.body)
              ? 'the body is not the one the device signed'
              : request.device !== vouch.device
                ? 'the relay vouches for another device'
                : !Number.isFinite(issued) ||
                    Math.abs(now - issued) > SIGNATURE_WINDOW_SECONDS * 1000
                  ? 'issuedAt is more than five minutes off'
                  : !verifyHeader(deviceHeader, header(DEVICE_SIGNATURE) ?? '', request.device)
                    ? 'the device signature does not verify'
                    : null;
    if (problem)
      return refuse(401, 'unauthenticated', 'the device request was not accepted', problem);
    try {
      await insertNonce(this.deps.db.kysely, {
        scope: `device:${request.device}`,
        nonce,
        expiresAt: issued + SIGNATURE_WINDOW_SECONDS * 2000,
      });
    } catch (err) {
      if (isUniqueViolation(err)) {
        return refuse(401, 'unauthenticated', 'the device request was not accepted', 'replayed');
      }
      throw err;
    }
    if (!HOST_PATH_RE.test(input.tail) || input.tail.startsWith('/api/remote/')) {
      return refuse(404, 'not_found', `${input.tail.split('?')[0]} is not served to other servers`);
    }

    let session: { token: string; csrf: string };
    let accountId: string;
    try {
      accountId = await remoteAccount(this.deps, input.peer.serverId, vouch.user);
      await remoteDevice(this.deps, accountId, vouch.device);
      session = await this.remoteSession(accountId, vouch.device);
    } catch (err) {
      if (err instanceof AppError) {
        const status = err.code === 'FORBIDDEN' ? 403 : err.code === 'VALIDATION' ? 400 : 401;
        return refuse(status, err.code.toLowerCase(), err.message);
      }
      throw err;
    }
    const contentType = header('content-type');
    const result = await run({
      method: input.method,
      url: input.tail,
      headers: {
        cookie: `svc_session=${session.token}; svc_csrf=${session.csrf}`,
        'x-csrf-token': session.csrf,
        ...(contentType ? { 'content-type': contentType } : {}),
      },
      body: input.body,
    });
    const headers: Record<string, string> = {};
    for (const name of ['content-type', 'retry-after', 'content-disposition', 'cache-control']) {
      const v = result.headers[name];
      if (typeof v === 'string' || typeof v === 'number') headers[name] = String(v);
    }
    // The person's live events follow them to their relay (joined workspaces included).
    if (this.deps.bridge) {
      await this.deps.bridge
        .refresh(accountId, input.peer.serverId, vouch.user)
        .catch((err: unknown) => this.deps.log.warn({ err }, 'event bridge refresh failed'));
    }
    return this.signed(nonce, { status: result.status, headers, body: result.body });
  }

  /**
   * Relay side of the bridge: events a host sends for one of this server's people, published on
   * their own topic so `relayStream` delivers them, with `hostServerId` naming the host. Only
   * from a host the person used through this relay. Each event is published once: its id is
   * remembered (`relay_event`, shared by every process of this server) in the transaction that
   * publishes it, and a copy is dropped. Events older than EVENT_MAX_AGE_MS are dropped too (a
   * copy that old might no longer be remembered).
   */
  async receiveEvents(
    host: string,
    input: { user: unknown; events: unknown },
  ): Promise<{ delivered: number; repeated: number }> {
    if (typeof input.user !== 'string' || !Array.isArray(input.events)) {
      throw new AppError('VALIDATION', 'send { user, events: [...] }');
    }
    if (input.events.length > 100) throw new AppError('VALIDATION', 'at most 100 events a call');
    const account = await findAccountByUsernameKey(this.deps.db.kysely, lookupKey(input.user));
    if (!account || account.homeServer !== null)
      throw new AppError('NOT_FOUND', 'person not found');
    const used = await hostsOfAccount(this.deps.db.kysely, account.id);
    if (!used.includes(host)) throw new AppError('NOT_FOUND', 'person not found');
    const now = this.deps.clock.now().getTime();
    const items = (input.events as RelayedEvent[]).filter(
      (item) =>
        typeof item?.id === 'string' &&
        item.id.length > 0 &&
        item.id.length <= 128 &&
        typeof item.type === 'string' &&
        item.type.length <= 64 &&
        typeof item.at === 'number' &&
        item.at > now - EVENT_MAX_AGE_MS &&
        item.payload !== null &&
        typeof item.payload === 'object' &&
        !Array.isArray(item.payload),
    );
    let delivered = 0;
    let repeated = 0;
    await this.deps.db.transaction(async (tx) => {
      for (const item of items) {
        const fresh = await insertRelayEvent(tx.db, {
          accountId: account.id,
          hostServerId: host,
          eventId: item.id,
          expiresAt: now + RELAY_EVENT_MEMORY_MS,
        });
        if (!fresh) {
          repeated++;
          continue;
        }
        this.deps.events.publishOnCommit(tx, {
          topic: userTopic(account.id),
          type: item.type,
          at: item.at,
          payload: { ...item.payload, hostServerId: host },
        });
        delivered++;
      }
    });
    if (repeated > 0) {
      this.deps.log.info({ host, user: input.user, repeated }, 'relay: repeated events dropped');
    }
    return { delivered, repeated };
  }

  /**
   * The answer to a forwarded device request from a proven relay that is over its
   * SVC_S2S_PEER_RATE_PER_MIN: 429 with Retry-After, signed for the device's request like every
   * other answer of the host, so the relay passes it to the person unchanged (contract: Relay)
   * instead of a 502 for an answer it could not verify. Signing a refusal for a nonce vouches for
   * nothing but the refusal itself.
   */
  hostOverLimit(
    headers: Record<string, string | string[] | undefined>,
    retryAfterSeconds: number,
    message: string,
  ): ForwardedAnswer {
    const raw = headers[DEVICE_REQUEST];
    const request = decodeStatement<DeviceRequest>(Array.isArray(raw) ? raw[0] : raw);
    const nonce = typeof request?.nonce === 'string' ? request.nonce : null;
    return this.signed(nonce, {
      status: 429,
      headers: {
        'content-type': 'application/json; charset=utf-8',
        'retry-after': String(retryAfterSeconds),
      },
      body: Buffer.from(JSON.stringify({ error: 'rate_limited', message, retryAfterSeconds })),
    });
  }

  private signed(nonce: string | null, a: ForwardedAnswer): ForwardedAnswer {
    if (nonce === null || !this.deps.selfId) return a;
    const signed = hostResponseHeaders(
      {
        host: this.deps.selfId,
        requestNonce: nonce,
        status: a.status,
        body: a.body,
        key: this.deps.keys.signingPublicRaw,
      },
      this.deps.keys.signing,
    );
    return { ...a, headers: { ...a.headers, ...signed } };
  }

  private async remoteSession(
    accountId: string,
    deviceKey: string,
  ): Promise<{ token: string; csrf: string }> {
    const cacheKey = `${accountId} ${deviceKey}`;
    const cached = this.remoteSessions.get(cacheKey);
    if (cached && (await this.deps.sessions.resolve(cached.token))) return cached;
    // SessionService.start refuses a blocked principal (`server:` or `remote:`) with FORBIDDEN.
    const issued = await this.deps.sessions.start(this.deps.db.kysely, { accountId });
    const fresh = { token: issued.token, csrf: issued.csrfToken };
    if (this.remoteSessions.size >= 10_000) {
      this.remoteSessions.delete(this.remoteSessions.keys().next().value as string);
    }
    this.remoteSessions.set(cacheKey, fresh);
    return fresh;
  }

  /**
   * Forgets a person's cached sessions here (a device was revoked), and with `events` also their
   * event streams (no device left, or blocked).
   */
  forgetPerson(accountId: string, events = true): void {
    for (const key of [...this.remoteSessions.keys()]) {
      if (key.startsWith(`${accountId} `)) this.remoteSessions.delete(key);
    }
    if (events) this.deps.bridge?.close(accountId);
  }
}
