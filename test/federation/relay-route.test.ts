import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import Sqlite from 'better-sqlite3';
import { sql } from 'kysely';

import { agentHeaders, createTestApp, type Agent } from '../_util/app.js';
import { signUpAndIn } from '../_util/seed.js';
import { newKey, signUpWithKey, type KeyAccount } from '../devices/_keys.js';
import { multipart } from '../files/_image-upload.js';
import { bundleBytes } from '../plugins/_bundles.js';
import { BUNDLE_TYPE } from '../plugins/_helpers.js';

import {
  checkHostResponse,
  CREATE_INVITE,
  CREATE_WORKSPACE,
  deviceHeaders,
  discoveryKey,
  JOIN,
  keyUser,
  SEND,
  startPeer,
  TamperProxy,
  viaRelay,
  viaRelayRaw,
  type Peer,
} from './_fed.js';

const ME = '{ me { username homeServer } }';
const MiB = 1024 * 1024;

// The relay route's rules (contract: Relay; docs/federation.md, "The relay route") beyond the
// three-server walk-through: each of the relay's own refusals in its shape, the 32 MiB bound
// from both sides, forwarded attachment and bundle downloads, and the host's features.
describe('the relay route: refusals, size, forwarded downloads', () => {
  let a: Peer;
  let b: Peer;
  /** A host with attachments and workspace plugins switched off. */
  let d: Peer;
  let alice: KeyAccount;
  let bob: Agent;
  let workspaceId: string;
  let channelId: string;

  beforeAll(async () => {
    // The relay's default time for a peer's answer, not the federation tests' 1.5 s: a 32 MiB
    // body is signed, sent and answered here on a machine that runs other tests beside.
    a = await startPeer({ env: { SVC_S2S_TIMEOUT_MS: '10000' } });
    b = await startPeer({ env: { SVC_ROLE: 'host' } });
    d = await startPeer({
      env: { SVC_ROLE: 'host', SVC_FEATURES_DISABLED: 'attachments, workspace_plugins' },
    });
    alice = await keyUser(a, 'alice');
    bob = await signUpAndIn(b.t, { username: 'bob' });
    const ws = await b.t.gql(CREATE_WORKSPACE, { name: 'Files' }, bob);
    workspaceId = ws.body.data!.createWorkspace.id;
    channelId = ws.body.data!.createWorkspace.channels[0].id;
    const token = (await b.t.gql(CREATE_INVITE, { id: workspaceId }, bob)).body.data!
      .createWorkspaceInvite.token;
    expect((await viaRelay(a, alice, b.id, JOIN, { token })).json().errors).toBeUndefined();
  });
  afterAll(async () => {
    await a?.stop();
    await b?.stop();
    await d?.stop();
  });

  const relayShape = (res: { status: number; json(): any }, status: number, error: string) => {
    expect(res.status).toBe(status);
    expect(res.json()).toEqual({ error, message: expect.any(String) });
  };

  it('lists the hosts a person reached through the relay in myRemoteHosts, for each of their sessions', async () => {
    // Alice's first request to d, a refused one, lists d too: the relay forwarded it.
    await viaRelay(a, alice, d.id, ME);
    const listed = await a.t.gql('{ myRemoteHosts }', {}, alice.agent);
    expect(listed.body.errors).toBeUndefined();
    expect(listed.body.data!.myRemoteHosts).toEqual([b.id, d.id]);
    // Pages both ways, a host of the list being its own cursor.
    const page = async (args: string) => {
      const res = await a.t.gql(`{ myRemoteHosts(${args}) }`, {}, alice.agent);
      return res.body.errors
        ? `${res.body.errors[0]!.extensions?.code}: ${res.body.errors[0]!.message}`
        : res.body.data!.myRemoteHosts;
    };
    expect(await page('limit: 1')).toEqual([b.id]);
    expect(await page(`after: "${b.id}", limit: 1`)).toEqual([d.id]);
    expect(await page(`after: "${d.id}"`)).toEqual([]);
    expect(await page(`before: "${d.id}", limit: 1`)).toEqual([b.id]);
    expect(await page(`before: "${b.id}"`)).toEqual([]);
    expect(await page('after: "nowhere.example"')).toMatch(/^VALIDATION: after must be a host/);
    expect(await page(`after: "${b.id}", before: "${d.id}"`)).toMatch(/^VALIDATION: pass at most/);
    expect(await page('limit: 0')).toMatch(/^VALIDATION: limit must be between 1 and 1000/);
    expect(await page('limit: 1001')).toMatch(/^VALIDATION/);
    // Using the hosts again after the first page moves neither: the next page goes on from the
    // cursor (contract, Pagination: items added meanwhile never shift a cursor).
    await viaRelay(a, alice, d.id, ME);
    await viaRelay(a, alice, b.id, ME);
    expect(await page('limit: 1')).toEqual([b.id]);
    expect(await page(`after: "${b.id}", limit: 1`)).toEqual([d.id]);
    expect(await page(`before: "${d.id}"`)).toEqual([b.id]);
    // A person who used no host has none; another person's hosts are not theirs.
    const carol = await keyUser(a, 'carol');
    expect((await a.t.gql('{ myRemoteHosts }', {}, carol.agent)).body.data!.myRemoteHosts).toEqual(
      [],
    );
    expect((await a.t.gql('{ myRemoteHosts }')).body.errors?.[0]?.extensions?.code).toBe(
      'UNAUTHENTICATED',
    );
  });

  it('refuses a malformed host id, a password session and a CSRF token of another session', async () => {
    relayShape(await viaRelay(a, alice, 'not a host!', ME), 400, 'validation');
    relayShape(await viaRelay(a, alice, 'user@b.example', ME), 400, 'validation');

    // A session bound to no device cannot sign device requests: the relay says so.
    const pw = await signUpAndIn(a.t, { username: 'pat' });
    const res = await viaRelay(a, { ...alice, agent: pw }, b.id, ME);
    relayShape(res, 403, 'forbidden');
    expect(res.json().message).toMatch(/device key/);

    // The CSRF header must be the token of this session, not any valid one.
    const other = await signUpAndIn(a.t);
    const csrf = await viaRelay(
      a,
      alice,
      b.id,
      ME,
      {},
      {
        headers: { 'x-csrf-token': other.csrfToken },
      },
    );
    relayShape(csrf, 403, 'forbidden');
    // GET and POST only.
    const head = await fetch(`${a.url}/api/remote/${b.id}/api/sdl`, {
      method: 'HEAD',
      headers: agentHeaders(alice.agent),
    });
    expect(head.status).toBe(404);
    const put = await fetch(`${a.url}/api/remote/${b.id}/api`, {
      method: 'PUT',
      headers: agentHeaders(alice.agent),
    });
    const putBody: unknown = await put.json();
    relayShape({ status: put.status, json: () => putBody }, 404, 'not_found');
    // A GET needs no CSRF header.
    const get = await viaRelayRaw(a, alice, b.id, { method: 'GET', path: '/api/sdl' });
    expect(get.status).toBe(200);
    checkHostResponse(get, { host: b.id, hostKey: await discoveryKey(b) });
  });

  it('refuses to relay on a server that does not federate (no SVC_PUBLIC_BASE_URL)', async () => {
    const t = await createTestApp({ env: { SVC_OPEN_REGISTRATION: 'true' } });
    try {
      const solo = await signUpWithKey(t);
      const res = await t.inject({
        method: 'POST',
        url: `/api/remote/${b.id}/api`,
        headers: { 'content-type': 'application/json', ...agentHeaders(solo.agent) },
        payload: '{}',
      });
      expect(res.statusCode).toBe(403);
      expect(res.json()).toEqual({
        error: 'forbidden',
        message: expect.stringContaining('SVC_PUBLIC_BASE_URL'),
      });
    } finally {
      await t.close();
    }
  });

  it('forwards a body of exactly 32 MiB to the host (one byte more is refused by the relay)', async () => {
    const body = Buffer.alloc(32 * MiB, 0x20);
    const res = await viaRelayRaw(a, alice, b.id, {
      method: 'POST',
      path: '/api',
      body,
      contentType: 'application/json',
    });
    // The host's own answer to a body its GraphQL route does not take, signed for this request.
    expect(res.status).not.toBe(502);
    expect(res.json().error).not.toBe('too_large');
    checkHostResponse(res, { host: b.id, hostKey: await discoveryKey(b) });

    const over = await viaRelayRaw(a, alice, b.id, {
      method: 'POST',
      path: '/api',
      body: Buffer.alloc(32 * MiB + 1, 0x20),
      contentType: 'application/json',
    });
    relayShape(over, 413, 'too_large');
    expect(over.headers.get('svc-host-signature')).toBeNull();
  });

  it("a fault of the relay's own is answered in its shape, with the request id", async () => {
    // The table the relay writes before forwarding is gone for a moment.
    await sql`alter table relay_host rename to relay_host_away`.execute(a.ctx.db.kysely);
    try {
      const res = await viaRelay(a, alice, b.id, ME);
      expect(res.status).toBe(500);
      expect(res.json()).toEqual({
        error: 'internal',
        message: expect.any(String),
        request_id: expect.any(String),
      });
    } finally {
      await sql`alter table relay_host_away rename to relay_host`.execute(a.ctx.db.kysely);
    }
    expect((await viaRelay(a, alice, b.id, ME)).status).toBe(200);
  });

  it('answers a database that does not answer in time with 504 and Retry-After, in its shape', async () => {
    // A relay of its own with a short statement time limit, and its database's write lock (SQLite)
    // or the relay's table (PostgreSQL) held by another connection meanwhile.
    const e = await startPeer({ env: { SVC_DATABASE_STATEMENT_TIMEOUT_MS: '1000' } });
    try {
      const erin = await keyUser(e, 'erin');
      expect((await viaRelay(e, erin, b.id, ME)).status).toBe(200);
      const res = await whileRelayTableHeld(e, () => viaRelay(e, erin, b.id, ME));
      expect(res.status).toBe(504);
      expect(res.headers.get('retry-after')).toMatch(/^[1-9][0-9]*$/);
      expect(res.json()).toEqual({ error: 'timeout', message: expect.any(String) });
      expect((await viaRelay(e, erin, b.id, ME)).status).toBe(200);
    } finally {
      await e.stop();
    }
  });

  it('forwards an attachment download with its name and caching, never to be run as a page', async () => {
    const sent = await b.t.gql(SEND, { c: channelId, text: 'the page' }, bob);
    const messageId = sent.body.data!.sendMessage.id as string;
    const created = await b.t.gql(
      `mutation($c: ID!) { createAttachment(input: { conversationId: $c, fileName: "page.html" }) { attachmentId uploadToken } }`,
      { c: channelId },
      bob,
    );
    const att = created.body.data!.createAttachment as {
      attachmentId: string;
      uploadToken: string;
    };
    const html = Buffer.from('<script>alert(document.cookie)</script>');
    const form = multipart([
      { name: 'upload_token', value: att.uploadToken },
      { name: 'attachment_id', value: att.attachmentId },
      { name: 'file', filename: 'page.html', type: 'text/html', bytes: html },
    ]);
    const up = await b.app.inject({
      method: 'POST',
      url: '/api/files/upload',
      headers: { 'content-type': form.contentType, ...agentHeaders(bob) },
      payload: form.body,
    });
    expect(up.statusCode, up.body).toBe(200);
    const fin = await b.t.gql(
      `mutation($a: ID!, $m: ID!) { finalizeAttachment(input: { attachmentId: $a, messageId: $m }) { id } }`,
      { a: att.attachmentId, m: messageId },
      bob,
    );
    expect(fin.body.errors).toBeUndefined();

    const path = `/api/attachments/${att.attachmentId}/download`;
    const direct = await b.app.inject({ method: 'GET', url: path, headers: agentHeaders(bob) });
    const res = await viaRelayRaw(a, alice, b.id, { method: 'GET', path });
    expect(res.status).toBe(200);
    expect(res.bytes.equals(html)).toBe(true);
    checkHostResponse(res, { host: b.id, hostKey: await discoveryKey(b) });
    expect(res.headers.get('content-type')).toBe(direct.headers['content-type']);
    expect(res.headers.get('content-disposition')).toBe(direct.headers['content-disposition']);
    expect(res.headers.get('content-disposition')).toContain('page.html');
    expect(res.headers.get('cache-control')).toBe(direct.headers['cache-control']);
    // Served on the relay's origin: not sniffed, and sandboxed if a browser ever opened it.
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('content-security-policy')).toMatch(/^sandbox/);
  });

  it('forwards a plugin bundle download, bytes and immutable caching unchanged', async () => {
    const bytes = bundleBytes();
    const up = await b.app.inject({
      method: 'POST',
      url: `/api/plugin-bundles/${workspaceId}`,
      headers: { 'content-type': BUNDLE_TYPE, ...agentHeaders(bob) },
      payload: bytes,
    });
    expect([200, 201], up.body).toContain(up.statusCode);
    const sha = up.json().sha256 as string;
    const res = await viaRelayRaw(a, alice, b.id, {
      method: 'GET',
      path: `/api/plugin-bundles/${workspaceId}/${sha}`,
    });
    expect(res.status).toBe(200);
    expect(res.bytes.equals(bytes)).toBe(true);
    expect(res.headers.get('content-type')).toMatch(/^application\/vnd\.svc\.plugin-bundle\+json/);
    expect(res.headers.get('cache-control')).toBe('private, max-age=31536000, immutable');
    checkHostResponse(res, { host: b.id, hostKey: await discoveryKey(b) });
    // Someone who is not a member of the workspace gets the host's refusal, signed.
    const carl = await keyUser(a, 'carl');
    const refused = await viaRelayRaw(a, carl, b.id, {
      method: 'GET',
      path: `/api/plugin-bundles/${workspaceId}/${sha}`,
    });
    expect([403, 404]).toContain(refused.status);
    checkHostResponse(refused, { host: b.id, hostKey: await discoveryKey(b) });
  });

  it("a host's switched-off features refuse the forwarded downloads, signed", async () => {
    const hostKey = await discoveryKey(d);
    const attachment = await viaRelayRaw(a, alice, d.id, {
      method: 'GET',
      path: '/api/attachments/0190f5a0-0000-7000-8000-000000000000/download',
    });
    expect(attachment.status).toBe(403);
    expect(attachment.json()).toMatchObject({ code: 'FEATURE_DISABLED', feature: 'attachments' });
    checkHostResponse(attachment, { host: d.id, hostKey });
    const bundle = await viaRelayRaw(a, alice, d.id, {
      method: 'GET',
      path: `/api/plugin-bundles/0190f5a0-0000-7000-8000-000000000000/${'A'.repeat(43)}`,
    });
    expect(bundle.status).toBe(403);
    expect(bundle.json()).toMatchObject({
      code: 'FEATURE_DISABLED',
      feature: 'workspace_plugins',
    });
    checkHostResponse(bundle, { host: d.id, hostKey });
  });

  it('a device request more than five minutes old is refused by the host, signed', async () => {
    const body = Buffer.from(JSON.stringify({ query: ME }));
    for (const minutes of [-6, 6]) {
      const dh = deviceHeaders(alice.device, {
        host: b.id,
        method: 'POST',
        path: '/api',
        body,
        issuedAt: new Date(Date.now() + minutes * 60_000),
      });
      const res = await fetch(`${a.url}/api/remote/${b.id}/api`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...agentHeaders(alice.agent),
          'svc-device-request': dh['svc-device-request'],
          'svc-device-signature': dh['svc-device-signature'],
        },
        body,
      });
      const text = await res.text();
      expect(res.status).toBe(401);
      checkHostResponse(
        { status: 401, headers: res.headers, text, json: () => JSON.parse(text), nonce: dh.nonce },
        { host: b.id, hostKey: await discoveryKey(b) },
      );
    }
    expect(
      b.logs.lines.filter(
        (l) => l.msg === 'host: forwarded request refused' && /five minutes/.test(String(l.detail)),
      ),
    ).toHaveLength(2);
  });

  it('the host checks the device request against the device the relay vouches for', async () => {
    // Calls a relay could make (signed by A, so past /s2s/v1's check), built by hand.
    const body = Buffer.from(JSON.stringify({ query: ME }));
    const vouch = (device: string) =>
      Buffer.from(JSON.stringify({ user: 'alice', device, displayName: null })).toString(
        'base64url',
      );
    const forward = async (dh: ReturnType<typeof deviceHeaders>, vouched: string) => {
      const res = await a.ctx.federation.client!.call(b.id, {
        method: 'POST',
        path: 'forward/api',
        headers: {
          'content-type': 'application/json',
          'svc-device-request': dh['svc-device-request'],
          'svc-device-signature': dh['svc-device-signature'],
          'svc-relay-vouch': vouched,
        },
        body,
      });
      const text = res.body.toString('utf8');
      const headers = new Headers(res.headers as Record<string, string>);
      checkHostResponse(
        { status: res.status, headers, text, json: () => JSON.parse(text), nonce: dh.nonce },
        { host: b.id, hostKey: await discoveryKey(b) },
      );
      return res.status;
    };
    const other = newKey();
    const o = { host: b.id, method: 'POST', path: '/api', body };
    // A request by another device than the one vouched for.
    expect(await forward(deviceHeaders(other, o), vouch(alice.device.publicKey))).toBe(401);
    // A request naming alice's device but signed by another key.
    const forged = deviceHeaders(alice.device, o);
    const byOther = deviceHeaders(other, o);
    expect(
      await forward(
        {
          ...forged,
          'svc-device-signature': byOther['svc-device-signature'],
        },
        vouch(alice.device.publicKey),
      ),
    ).toBe(401);
    // A request for another path than the one forwarded.
    expect(
      await forward(
        deviceHeaders(alice.device, { ...o, path: '/api/sdl' }),
        vouch(alice.device.publicKey),
      ),
    ).toBe(401);
    const details = b.logs.lines
      .filter((l) => l.msg === 'host: forwarded request refused')
      .map((l) => String(l.detail));
    expect(details).toEqual(
      expect.arrayContaining([
        'the relay vouches for another device',
        'the device signature does not verify',
        'the request names another method or path',
      ]),
    );
    // The genuine request passes.
    expect(await forward(deviceHeaders(alice.device, o), vouch(alice.device.publicKey))).toBe(200);
  });

  it('refuses a host whose descriptor names another origin than the one it was reached at', async () => {
    // B reached through a second address: its signed descriptor names its own.
    const proxy = new TamperProxy(b.address.port);
    await proxy.start();
    try {
      const elsewhere = `127.0.0.1:${proxy.port}`;
      const res = await viaRelay(a, alice, elsewhere, ME);
      expect(res.status).toBe(502);
      expect(res.json()).toMatchObject({ error: 'upstream_unavailable', hostServerId: elsewhere });
      expect(
        a.logs.lines.some(
          (l) =>
            l.msg === 'relay: host gave no verified answer' &&
            /bad_discovery: the descriptor is for/.test(String(l.why)),
        ),
      ).toBe(true);
    } finally {
      await proxy.close();
    }
  });
});

/** Runs `fn` while another connection holds what the relay writes before forwarding. */
async function whileRelayTableHeld<T>(peer: Peer, fn: () => Promise<T>): Promise<T> {
  const file = peer.ctx.db.file;
  if (file) {
    const other = new Sqlite(file);
    try {
      other.exec('begin immediate');
      return await fn();
    } finally {
      other.exec('rollback');
      other.close();
    }
  }
  return peer.ctx.db.kysely.connection().execute(async (conn) => {
    await sql`begin`.execute(conn);
    try {
      await sql`lock table relay_host in access exclusive mode`.execute(conn);
      return await fn();
    } finally {
      await sql`rollback`.execute(conn);
    }
  });
}
