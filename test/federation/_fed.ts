import { randomBytes, createHash, createPublicKey, sign, verify } from 'node:crypto';
import http from 'node:http';
import net from 'node:net';

import { expect } from 'vitest';

import type { HttpAppOptions } from '../../src/http/app.js';
import type { RunningServer } from '../../src/main.js';
import {
  agentHeaders,
  startTestServer,
  type Agent,
  type GqlResponse,
  type LogCapture,
  type TestApp,
  type TestDatabase,
} from '../_util/app.js';
import {
  challenge,
  loginWithKey,
  newKey,
  nowIso,
  signText,
  signUpWithKey,
  statement,
  type KeyAccount,
  type TestKey,
} from '../devices/_keys.js';

// A test client's and a test network's side of docs/federation.md, written from the document:
// the device request and host response statements are built and checked here by hand.

export type Peer = RunningServer & {
  database: TestDatabase;
  url: string;
  logs: LogCapture;
  /** host:port, the server id. */
  id: string;
  /** The TestApp face the key helpers need (gql over inject, ctx). */
  t: TestApp;
};

/** A free loopback port (the server then listens on it, so its public URL is known first). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

/**
 * A real server on a loopback port with its own database, federating as `http://127.0.0.1:<port>`
 * (or `publicUrl`, for a server behind a proxy the test runs).
 */
export async function startPeer(
  opts: {
    env?: Record<string, string>;
    port?: number;
    publicUrl?: string;
    database?: TestDatabase;
    /** Test-only routes (a host answer no real route gives on demand). */
    http?: HttpAppOptions;
  } = {},
): Promise<Peer> {
  const port = opts.port ?? (await freePort());
  const publicUrl = opts.publicUrl ?? `http://127.0.0.1:${port}`;
  const server = await startTestServer({
    database: opts.database,
    env: {
      SVC_SERVER_PORT: String(port),
      SVC_PUBLIC_BASE_URL: publicUrl,
      SVC_S2S_INSECURE: 'true',
      SVC_OPEN_REGISTRATION: 'true',
      SVC_S2S_TIMEOUT_MS: '1500',
      SVC_DATABASE_STATEMENT_TIMEOUT_MS: '30000',
      ...opts.env,
    },
    overrides: { s2sOutboxIntervalMs: 100 },
    http: opts.http,
  });
  const t = {
    ctx: server.ctx,
    async gql(query: string, variables?: Record<string, unknown>, agent?: Agent | null) {
      const response = await server.app.inject({
        method: 'POST',
        url: '/api',
        headers: { 'content-type': 'application/json', ...agentHeaders(agent) },
        payload: JSON.stringify({ query, variables }),
      });
      return { status: response.statusCode, body: response.json(), response } as GqlResponse;
    },
  } as unknown as TestApp;
  return { ...server, id: new URL(publicUrl).host, t };
}

export async function keyUser(peer: Peer, username?: string): Promise<KeyAccount> {
  return signUpWithKey(peer.t, username ? { username } : {});
}

/** docs/federation.md, "Device requests": the statement and the device's signature over it. */
export function deviceHeaders(
  device: TestKey,
  o: { host: string; method: string; path: string; body: Buffer; issuedAt?: Date; nonce?: string },
): { 'svc-device-request': string; 'svc-device-signature': string; nonce: string } {
  const nonce = o.nonce ?? randomBytes(18).toString('base64url');
  const statement = {
    type: 'svc.device-request.v1',
    host: o.host,
    method: o.method,
    path: o.path,
    digest: `sha-256=:${createHash('sha256').update(o.body).digest('base64')}:`,
    device: device.publicKey,
    issuedAt: (o.issuedAt ?? new Date()).toISOString(),
    nonce,
  };
  const value = Buffer.from(JSON.stringify(statement)).toString('base64url');
  return {
    'svc-device-request': value,
    'svc-device-signature': sign(null, Buffer.from(value, 'ascii'), device.privateKey).toString(
      'base64url',
    ),
    nonce,
  };
}

export interface RelayAnswer {
  status: number;
  headers: Headers;
  text: string;
  json(): any;
  nonce: string;
}

/** A GraphQL request to `host`'s /api through the person's relay, over real HTTP. */
export async function viaRelay(
  relay: Peer,
  who: KeyAccount,
  host: string,
  query: string,
  variables: Record<string, unknown> = {},
  o: { csrf?: boolean; headers?: Record<string, string> } = {},
): Promise<RelayAnswer> {
  const body = Buffer.from(JSON.stringify({ query, variables }));
  const dh = deviceHeaders(who.device, { host, method: 'POST', path: '/api', body });
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    ...agentHeaders(who.agent),
    'svc-device-request': dh['svc-device-request'],
    'svc-device-signature': dh['svc-device-signature'],
    ...o.headers,
  };
  if (o.csrf === false) delete headers['x-csrf-token'];
  const res = await fetch(`${relay.url}/api/remote/${host}/api`, {
    method: 'POST',
    headers,
    body,
  });
  const text = await res.text();
  return {
    status: res.status,
    headers: res.headers,
    text,
    json: () => JSON.parse(text),
    nonce: dh.nonce,
  };
}

/** The host's current key as its discovery document states it (verified like a client would). */
export async function discoveryKey(peer: Peer): Promise<string> {
  const res = await fetch(`${peer.url}/.well-known/svc-server`);
  return keyOfDocument(res);
}

async function keyOfDocument(res: Response): Promise<string> {
  const doc = (await res.json()) as { keyLog: Array<{ payload: string }> };
  return JSON.parse(doc.keyLog.at(-1)!.payload).key as string;
}

/** docs/federation.md, "Host responses": checks the host's statement as a client does. */
export function checkHostResponse(answer: RelayAnswer, o: { host: string; hostKey: string }): void {
  const statementHeader = answer.headers.get('svc-host-response');
  const signature = answer.headers.get('svc-host-signature');
  expect(statementHeader, 'Svc-Host-Response').toBeTruthy();
  expect(signature, 'Svc-Host-Signature').toBeTruthy();
  const key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: o.hostKey }, format: 'jwk' });
  expect(
    verify(null, Buffer.from(statementHeader!, 'ascii'), key, Buffer.from(signature!, 'base64url')),
  ).toBe(true);
  const statement = JSON.parse(Buffer.from(statementHeader!, 'base64url').toString('utf8'));
  expect(statement).toMatchObject({
    type: 'svc.host-response.v1',
    host: o.host,
    request: answer.nonce,
    status: answer.status,
    digest: `sha-256=:${createHash('sha256').update(answer.text).digest('base64')}:`,
  });
}

/**
 * An HTTP proxy the test puts in front of a server (as a reverse proxy or an attacker would be):
 * it can alter a request's body or a header, alter the answer's body, stall, or answer garbage.
 * It records each request it saw.
 */
export class TamperProxy {
  mode: 'pass' | 'request-body' | 'request-header' | 'response-body' | 'stall' | 'garbage' = 'pass';
  readonly seen: Array<{
    method: string;
    url: string;
    headers: http.IncomingHttpHeaders;
    body: Buffer;
  }> = [];
  private server!: http.Server;
  port = 0;
  private readonly stalled = new Set<http.ServerResponse>();

  constructor(private readonly targetPort: number) {}

  async start(port = 0): Promise<void> {
    this.server = http.createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve) => this.server.listen(port, '127.0.0.1', resolve));
    this.port = (this.server.address() as net.AddressInfo).port;
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    let body = Buffer.concat(chunks);
    this.seen.push({ method: req.method!, url: req.url!, headers: req.headers, body });
    if (this.mode === 'stall') {
      this.stalled.add(res);
      return;
    }
    if (this.mode === 'garbage') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"data": not json at all');
      return;
    }
    const headers = { ...req.headers };
    if (this.mode === 'request-body' && body.length > 0) {
      body = Buffer.from(body.toString('utf8').replace(/"query"/, '"query" '));
    }
    if (this.mode === 'request-header' && headers['content-type']) {
      headers['content-type'] = 'application/json; charset=latin1';
    }
    headers['content-length'] = String(body.length);
    const upstream = http.request(
      { host: '127.0.0.1', port: this.targetPort, method: req.method, path: req.url, headers },
      async (up) => {
        const parts: Buffer[] = [];
        for await (const c of up) parts.push(c as Buffer);
        let answer = Buffer.concat(parts);
        if (this.mode === 'response-body' && answer.length > 0) {
          answer = Buffer.from(answer.toString('utf8').replace(/.$/, ' }'));
        }
        const out = { ...up.headers, 'content-length': String(answer.length) };
        delete out['transfer-encoding'];
        res.writeHead(up.statusCode ?? 502, out);
        res.end(answer);
      },
    );
    upstream.on('error', () => {
      res.destroy();
    });
    upstream.end(body);
  }

  async close(): Promise<void> {
    for (const r of this.stalled) r.destroy();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

export const CREATE_WORKSPACE = `mutation($name: String!) {
  createWorkspace(input: { name: $name }) { id name channels { id name } }
}`;
export const CREATE_INVITE = `mutation($id: ID!) {
  createWorkspaceInvite(input: { serverId: $id, maxUses: 10 }) { token }
}`;
export const JOIN = `mutation($token: String!) { joinWorkspace(token: $token) { id name channels { id name } } }`;
export const SEND = `mutation($c: ID!, $text: String!) {
  sendMessage(input: { conversationId: $c, text: $text }) { id text author { username homeServer } }
}`;
export const READ = `query($c: ID!) { messages(conversationId: $c) { items { text author { username homeServer } } } }`;

/** Links a second device to a key account (docs/keys.md, "Linking another device"). */
export async function linkDevice(
  peer: Peer,
  acc: KeyAccount,
): Promise<KeyAccount & { deviceId: string }> {
  const device = newKey();
  const ch = await challenge(peer.t);
  const issuedAt = nowIso(peer.t);
  const text = statement('device-link', ch, issuedAt, [
    ['username', acc.username],
    ['device', device.publicKey],
  ]);
  const offer = await peer.t.gql(
    `mutation($input: SendDeviceLinkOfferInput!) { sendDeviceLinkOffer(input: $input) { offerId code } }`,
    {
      input: {
        username: acc.username,
        devicePublicKey: device.publicKey,
        deviceName: 'Phone',
        challengeId: ch.challengeId,
        issuedAt,
        signature: signText(device, text),
      },
    },
  );
  expect(offer.body.errors).toBeUndefined();
  const { offerId, code } = offer.body.data!.sendDeviceLinkOffer;
  const approved = await peer.t.gql(
    `mutation($input: ApproveDeviceLinkInput!) { approveDeviceLink(input: $input) { id } }`,
    { input: { offerId, code } },
    acc.agent,
  );
  expect(approved.body.errors).toBeUndefined();
  return {
    ...acc,
    device,
    deviceId: approved.body.data!.approveDeviceLink.id,
    agent: await loginWithKey(peer.t, device, acc.username),
  };
}

/** Any request to a path on `host` through the person's relay, body and type as given. */
export async function viaRelayRaw(
  relay: Peer,
  who: KeyAccount,
  host: string,
  o: { method: 'GET' | 'POST'; path: string; body?: Buffer; contentType?: string },
): Promise<RelayAnswer & { bytes: Buffer }> {
  const body = o.body ?? Buffer.alloc(0);
  const dh = deviceHeaders(who.device, { host, method: o.method, path: o.path, body });
  const headers: Record<string, string> = {
    ...agentHeaders(who.agent),
    'svc-device-request': dh['svc-device-request'],
    'svc-device-signature': dh['svc-device-signature'],
  };
  if (o.contentType) headers['content-type'] = o.contentType;
  const res = await fetch(`${relay.url}/api/remote/${host}${o.path}`, {
    method: o.method,
    headers,
    body: o.method === 'POST' ? new Uint8Array(body) : undefined,
  });
  const bytes = Buffer.from(await res.arrayBuffer());
  const text = bytes.toString('utf8');
  return {
    status: res.status,
    headers: res.headers,
    text,
    bytes,
    json: () => JSON.parse(text),
    nonce: dh.nonce,
  };
}

/**
 * The host's key as a client gets it: the host's discovery document through the relay
 * (`GET /api/remote/<host>/.well-known/svc-server`), its key log checked link by link.
 */
export async function hostKeyViaRelay(relay: Peer, who: KeyAccount, host: string): Promise<string> {
  const res = await fetch(`${relay.url}/api/remote/${host}/.well-known/svc-server`, {
    headers: agentHeaders(who.agent),
  });
  expect(res.status).toBe(200);
  const doc = (await res.json()) as { keyLog: Array<{ payload: string; signature: string }> };
  let prevKey: string | null = null;
  for (const entry of doc.keyLog) {
    const e = JSON.parse(entry.payload) as { key: string };
    const signer = createPublicKey({
      key: { kty: 'OKP', crv: 'Ed25519', x: prevKey ?? e.key },
      format: 'jwk',
    });
    expect(
      verify(null, Buffer.from(entry.payload), signer, Buffer.from(entry.signature, 'base64url')),
    ).toBe(true);
    prevKey = e.key;
  }
  return prevKey!;
}
