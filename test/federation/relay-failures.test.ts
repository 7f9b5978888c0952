import { createPublicKey, verify as edVerify } from 'node:crypto';

import { httpbis } from 'http-message-signatures';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { rateLimited } from '../../src/errors.js';
import { sendError } from '../../src/http/errors.js';
import type { ApiRoutes } from '../../src/http/trees/api.js';
import { agentHeaders } from '../_util/app.js';
import type { KeyAccount } from '../devices/_keys.js';

import {
  checkHostResponse,
  deviceHeaders,
  discoveryKey,
  freePort,
  keyUser,
  startPeer,
  TamperProxy,
  viaRelay,
  viaRelayRaw,
  type Peer,
} from './_fed.js';

const ME = '{ me { username homeServer } }';

/**
 * A route of the host's own that is over its limit: the answer every rate limit of a plain route
 * gives (429, Retry-After, `retryAfterSeconds`), through the app's one error mapping.
 */
const busyRoute: ApiRoutes = (api) => {
  api.get('/test-busy', async (_request, reply) =>
    sendError(reply, rateLimited(42, 'this host is busy')),
  );
};

// Relay A and host B, with B behind a proxy the test runs (as a reverse proxy or an attacker on
// the path would be): B's public address is the proxy's.
describe('the relay route when the host fails or the path is tampered with', () => {
  let a: Peer;
  let b: Peer;
  let proxy: TamperProxy;
  let alice: KeyAccount;
  let host: string;

  beforeAll(async () => {
    const bPort = await freePort();
    proxy = new TamperProxy(bPort);
    await proxy.start();
    a = await startPeer();
    b = await startPeer({
      port: bPort,
      publicUrl: `http://127.0.0.1:${proxy.port}`,
      http: { apiRoutes: [busyRoute] },
    });
    host = b.id;
    alice = await keyUser(a, 'alice');
  });
  afterAll(async () => {
    await proxy?.close();
    await a?.stop();
    await b?.stop();
  });

  it('passes the host answer through a transparent proxy, signed for the request', async () => {
    proxy.mode = 'pass';
    const res = await viaRelay(a, alice, host, ME);
    expect(res.status).toBe(200);
    expect(res.json().data.me).toEqual({ username: `alice@${a.id}`, homeServer: a.id });
    checkHostResponse(res, { host, hostKey: await discoveryKey(b) });
    // What A sent B verifies with an independent RFC 9421 implementation and A's published key.
    const call = proxy.seen.find((r) => r.url === '/s2s/v1/forward/api')!;
    const key = createPublicKey({
      key: { kty: 'OKP', crv: 'Ed25519', x: await discoveryKey(a) },
      format: 'jwk',
    });
    const ok = await httpbis.verifyMessage(
      {
        keyLookup: async () => ({
          id: a.id,
          algs: ['ed25519'],
          verify: async (data: Buffer, sig: Buffer) => edVerify(null, data, key, sig),
        }),
        requiredFields: [
          '@method',
          '@target-uri',
          'content-digest',
          'date',
          'svc-device-request',
          'svc-device-signature',
          'svc-relay-vouch',
        ],
      },
      {
        method: call.method,
        url: `http://${host}${call.url}`,
        headers: call.headers as Record<string, string>,
      },
    );
    expect(ok).toBe(true);
  });

  it("passes a host's 429 back with Retry-After, status, body and signature unchanged", async () => {
    proxy.mode = 'pass';
    const res = await viaRelayRaw(a, alice, host, { method: 'GET', path: '/api/test-busy' });
    // B's own answer on that route, asked directly.
    const direct = await fetch(`http://127.0.0.1:${b.address.port}/api/test-busy`);
    expect(direct.headers.get('retry-after')).toBe('42');
    expect(res.status).toBe(429);
    expect(res.headers.get('retry-after')).toBe('42');
    expect(res.headers.get('content-type')).toBe(direct.headers.get('content-type'));
    expect(res.text).toBe(await direct.text());
    expect(res.json()).toEqual({
      error: expect.stringContaining('this host is busy'),
      retryAfterSeconds: 42,
    });
    checkHostResponse(res, { host, hostKey: await discoveryKey(b) });
  });

  const upstream = (res: { status: number; json(): any }) => {
    expect(res.status).toBe(502);
    expect(res.json()).toEqual({
      error: 'upstream_unavailable',
      message: expect.any(String),
      hostServerId: host,
    });
  };

  it('502 when a man in the middle alters the request body (B refuses the digest)', async () => {
    proxy.mode = 'request-body';
    upstream(await viaRelay(a, alice, host, ME));
    expect(
      b.logs.lines.some((l) => l.msg === 's2s call refused' && l.reason === 'bad_digest'),
    ).toBe(true);
  });

  it('502 when a man in the middle alters a signed header', async () => {
    proxy.mode = 'request-header';
    upstream(await viaRelay(a, alice, host, ME));
    expect(
      b.logs.lines.some((l) => l.msg === 's2s call refused' && l.reason === 'bad_signature'),
    ).toBe(true);
  });

  it("502 when a man in the middle alters the host's answer", async () => {
    proxy.mode = 'response-body';
    upstream(await viaRelay(a, alice, host, ME));
  });

  it('502 when the host answers garbage', async () => {
    proxy.mode = 'garbage';
    upstream(await viaRelay(a, alice, host, ME));
  });

  it('502 when the host is slower than SVC_S2S_TIMEOUT_MS', async () => {
    proxy.mode = 'stall';
    upstream(await viaRelay(a, alice, host, ME));
    proxy.mode = 'pass';
  });

  it('502 when the host is down', async () => {
    const nobody = `127.0.0.1:${await freePort()}`;
    const res = await viaRelay(a, alice, nobody, ME);
    expect(res.status).toBe(502);
    expect(res.json()).toMatchObject({ error: 'upstream_unavailable', hostServerId: nobody });
  });

  it("the host's own refusals of a device request come back signed", async () => {
    proxy.mode = 'pass';
    // A replayed device request: the relay signs a fresh call, the host refuses the device's nonce.
    const body = Buffer.from(JSON.stringify({ query: ME }));
    const dh = deviceHeaders(alice.device, { host, method: 'POST', path: '/api', body });
    const send = () =>
      fetch(`${a.url}/api/remote/${host}/api`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...agentHeaders(alice.agent),
          'svc-device-request': dh['svc-device-request'],
          'svc-device-signature': dh['svc-device-signature'],
        },
        body,
      });
    expect((await send()).status).toBe(200);
    const replay = await send();
    expect(replay.status).toBe(401);
    const text = await replay.text();
    checkHostResponse(
      { status: 401, headers: replay.headers, text, json: () => JSON.parse(text), nonce: dh.nonce },
      { host, hostKey: await discoveryKey(b) },
    );

    // A device request for another host is refused by the host, signed.
    const other = deviceHeaders(alice.device, {
      host: 'elsewhere.example',
      method: 'POST',
      path: '/api',
      body,
    });
    const wrongHost = await fetch(`${a.url}/api/remote/${host}/api`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...agentHeaders(alice.agent),
        'svc-device-request': other['svc-device-request'],
        'svc-device-signature': other['svc-device-signature'],
      },
      body,
    });
    expect(wrongHost.status).toBe(401);
    expect(wrongHost.headers.get('svc-host-signature')).toBeTruthy();
  });

  it('the relay refuses a body over 32 MiB in its own shape', async () => {
    const res = await fetch(`${a.url}/api/remote/${host}/api`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...agentHeaders(alice.agent) },
      body: new Uint8Array(32 * 1024 * 1024 + 1),
    });
    expect(res.status).toBe(413);
    expect(await res.json()).toEqual({ error: 'too_large', message: expect.any(String) });
  });

  it("the relay refuses a request signed by a device that is not the session's", async () => {
    const mallory = await keyUser(a);
    const res = await viaRelay(a, { ...alice, device: mallory.device }, host, ME);
    expect(res.status).toBe(403);
    expect(res.json()).toEqual({ error: 'forbidden', message: expect.any(String) });
    const missing = await fetch(`${a.url}/api/remote/${host}/api`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...agentHeaders(alice.agent) },
      body: '{}',
    });
    expect(missing.status).toBe(400);
    expect((await missing.json()).error).toBe('validation');
  });
});

// Host B allows relay A three calls a minute (SVC_S2S_PEER_RATE_PER_MIN): the fourth forwarded
// request is over B's peer rate.
describe("the host's rate for a relay, through the relay", () => {
  let a: Peer;
  let b: Peer;
  let alice: KeyAccount;

  beforeAll(async () => {
    a = await startPeer();
    b = await startPeer({ env: { SVC_S2S_PEER_RATE_PER_MIN: '3' } });
    alice = await keyUser(a, 'alice');
  });
  afterAll(async () => {
    await a?.stop();
    await b?.stop();
  });

  it("reaches the person as the host's 429 with Retry-After, signed for the request, not a 502", async () => {
    let res = await viaRelay(a, alice, b.id, ME);
    for (let i = 0; i < 10 && res.status === 200; i++) res = await viaRelay(a, alice, b.id, ME);
    expect(res.status).toBe(429);
    const retryAfter = Number(res.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(0);
    expect(res.json()).toEqual({
      error: 'rate_limited',
      message: expect.stringContaining('too many calls from your server'),
      retryAfterSeconds: retryAfter,
    });
    checkHostResponse(res, { host: b.id, hostKey: await discoveryKey(b) });
    expect(
      b.logs.lines.some((l) => l.msg === 's2s call refused' && l.reason === 'rate_limited'),
    ).toBe(true);
  });

  it('other calls of that relay over the rate keep the plain 429', async () => {
    const res = await a.ctx.federation.client!.call(b.id, { method: 'GET', path: 'ping' });
    expect(res.status).toBe(429);
    expect(res.headers['svc-host-signature']).toBeUndefined();
  });
});
