import {
  createECDH,
  createDecipheriv,
  createPublicKey,
  hkdfSync,
  randomBytes,
  verify,
  type ECDH,
} from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { DIRECT_SPACE_ID } from '../../src/db/direct-space.js';
import { ManualClock, MINUTE_MS } from '../../src/lib/clock.js';
import { newId } from '../../src/lib/ids.js';
import { createTestApp, type Agent, type TestApp } from '../_util/app.js';
import { signUpAndIn } from '../_util/seed.js';
import {
  conversationOf,
  createWorkspace,
  expectCode,
  giveDevice,
  inviteAndJoin,
  ok,
  send,
} from '../conversations/_helpers.js';

import { generalOf, settle, UPDATE_SETTINGS } from './_helpers.js';

// Web Push (docs/notifications.md, "Web Push") against a push service the test runs on loopback.
// The payload is decrypted as a browser does (RFC 8291 over RFC 8188 aes128gcm), with node:crypto
// alone, independently of the server's `web-push` package; the VAPID token (RFC 8292) is checked
// against the key the server publishes.

interface Received {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

/** A browser's side of one subscription: its P-256 key pair and auth secret. */
class Browser {
  readonly ecdh: ECDH = createECDH('prime256v1');
  readonly auth = randomBytes(16);
  constructor(readonly endpoint: string) {
    this.ecdh.generateKeys();
  }
  get input() {
    return {
      endpoint: this.endpoint,
      p256dh: this.ecdh.getPublicKey().toString('base64url'),
      auth: this.auth.toString('base64url'),
    };
  }

  /** RFC 8291, section 3.4, and RFC 8188, section 2: one record, padding delimiter 0x02. */
  decrypt(body: Buffer): Record<string, unknown> {
    const salt = body.subarray(0, 16);
    const rs = body.readUInt32BE(16);
    const idlen = body[20]!;
    const asPublic = body.subarray(21, 21 + idlen);
    const record = body.subarray(21 + idlen);
    expect(idlen).toBe(65);
    expect(record.length).toBeLessThanOrEqual(rs);
    const uaPublic = this.ecdh.getPublicKey();
    const ecdhSecret = this.ecdh.computeSecret(asPublic);
    const keyInfo = Buffer.concat([Buffer.from('WebPush: info\0'), uaPublic, asPublic]);
    const ikm = Buffer.from(hkdfSync('sha256', ecdhSecret, this.auth, keyInfo, 32));
    const cek = Buffer.from(
      hkdfSync('sha256', ikm, salt, Buffer.from('Content-Encoding: aes128gcm\0'), 16),
    );
    const nonce = Buffer.from(
      hkdfSync('sha256', ikm, salt, Buffer.from('Content-Encoding: nonce\0'), 12),
    );
    const decipher = createDecipheriv('aes-128-gcm', cek, nonce);
    decipher.setAuthTag(record.subarray(record.length - 16));
    const padded = Buffer.concat([
      decipher.update(record.subarray(0, record.length - 16)),
      decipher.final(),
    ]);
    let end = padded.length - 1;
    while (end >= 0 && padded[end] === 0) end--;
    expect(padded[end]).toBe(2);
    return JSON.parse(padded.subarray(0, end).toString('utf8')) as Record<string, unknown>;
  }
}

/** Checks the VAPID `Authorization: vapid t=<JWT>, k=<key>` header; answers the JWT's claims. */
function checkVapid(headers: http.IncomingHttpHeaders, publicKey: string, audience: string) {
  const m = /^vapid t=([^,]+), k=(.+)$/.exec(String(headers.authorization));
  expect(m, String(headers.authorization)).not.toBeNull();
  const [, jwt, k] = m!;
  expect(k).toBe(publicKey);
  const [h, p, s] = jwt!.split('.');
  const point = Buffer.from(publicKey, 'base64url');
  const key = createPublicKey({
    key: {
      kty: 'EC',
      crv: 'P-256',
      x: point.subarray(1, 33).toString('base64url'),
      y: point.subarray(33, 65).toString('base64url'),
    },
    format: 'jwk',
  });
  const valid = verify(
    'sha256',
    Buffer.from(`${h}.${p}`),
    { key, dsaEncoding: 'ieee-p1363' },
    Buffer.from(s!, 'base64url'),
  );
  expect(valid).toBe(true);
  const header = JSON.parse(Buffer.from(h!, 'base64url').toString()) as { alg: string };
  expect(header.alg).toBe('ES256');
  const claims = JSON.parse(Buffer.from(p!, 'base64url').toString()) as {
    aud: string;
    exp: number;
    sub: string;
  };
  expect(claims.aud).toBe(audience);
  return claims;
}

const clock = new ManualClock(new Date('2026-03-02T09:00:00Z'));
let t: TestApp;
let pushService: http.Server;
let base: string;
const received: Received[] = [];
let olga: Agent, mike: Agent, mary: Agent;
let general: string;
let vapidKey: string;

const browsers = new Map<string, Browser>();
const browser = (agent: Agent): Browser => browsers.get(agent.id)!;

const REGISTER = `mutation($i: PushSubscriptionInput!) { registerPushSubscription(input: $i) }`;
const pushesTo = (path: string) => received.filter((r) => r.path === path);
async function delivered() {
  await settle(t);
  await t.ctx.services.webPush.settled();
}

beforeAll(async () => {
  pushService = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks) });
      res.statusCode = req.url?.startsWith('/gone/') ? 410 : 201;
      res.end();
    });
  });
  await new Promise<void>((resolve) => pushService.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(pushService.address() as AddressInfo).port}`;
  t = await createTestApp({
    clock,
    env: {
      SVC_PUSH_ALLOW_PRIVATE_ENDPOINTS: 'true',
      SVC_PUSH_CONTACT: 'mailto:ops@example.org',
    },
  });
  [olga, mike, mary] = await Promise.all(
    ['olga', 'mike', 'mary'].map((u) => signUpAndIn(t, { username: `${u}push` })),
  );
  const serverId = (await createWorkspace(t, olga, 'Push')).id;
  await inviteAndJoin(t, olga, serverId, [mike, mary]);
  general = await generalOf(t, olga, serverId);
  vapidKey = ok(await t.gql('{ webPushPublicKey }', {}, mike)).webPushPublicKey;
});
afterAll(async () => {
  await t?.close();
  await new Promise((resolve) => pushService?.close(resolve));
});

describe('web push', () => {
  it('publishes the VAPID key made at boot and stored with the server keys', async () => {
    expect(Buffer.from(vapidKey, 'base64url')).toHaveLength(65);
    const row = await t.ctx.db.kysely
      .selectFrom('server_key')
      .select('publicKey')
      .where('kind', '=', 'vapid')
      .executeTakeFirstOrThrow();
    expect(row.publicKey).toBe(vapidKey);
  });

  it('pushes an encrypted, VAPID-signed payload to a person with no open connection', async () => {
    const browser = new Browser(`${base}/push/mike-1`);
    browsers.set(mike.id, browser);
    ok(await t.gql(REGISTER, { i: browser.input }, mike));
    const m = await send(t, olga, general, 'deploy window @mikepush starts now');
    await delivered();
    const pushes = pushesTo('/push/mike-1');
    expect(pushes).toHaveLength(1);
    const push = pushes[0]!;
    expect(push.headers['content-encoding']).toBe('aes128gcm');
    expect(push.headers.ttl).toBe('86400');
    expect(push.headers.urgency).toBe('high');
    const claims = checkVapid(push.headers, vapidKey, base);
    expect(claims.sub).toBe('mailto:ops@example.org');
    expect(claims.exp * 1000).toBeGreaterThan(Date.now());
    // The ciphertext does not carry the text in the clear.
    expect(push.body.toString('latin1')).not.toContain('deploy');
    expect(browser.decrypt(push.body)).toMatchObject({
      kind: 'MENTION',
      messageId: m.id,
      conversationId: general,
      title: 'olgapush in #general',
      body: 'deploy window @mikepush starts now',
      encrypted: false,
    });
  });

  it('holds back pushes while the person is connected or in do-not-disturb', async () => {
    const browser = new Browser(`${base}/push/mary-1`);
    ok(await t.gql(REGISTER, { i: browser.input }, mary));
    t.ctx.services.presence.connected(mary.id);
    await send(t, olga, general, '@marypush while connected');
    await delivered();
    expect(pushesTo('/push/mary-1')).toHaveLength(0);
    t.ctx.services.presence.disconnected(mary.id);
    // Its release reaches the presence store after the call returns.
    let connected = true;
    for (let i = 0; i < 100 && connected; i++) {
      connected = await t.ctx.services.presence.isConnected(mary.id);
      if (connected) await new Promise((r) => setTimeout(r, 10));
    }
    expect(connected).toBe(false);

    const until = new Date(clock.now().getTime() + MINUTE_MS).toISOString();
    ok(await t.gql(UPDATE_SETTINGS, { i: { doNotDisturbUntil: until } }, mary));
    await send(t, olga, general, '@marypush during do-not-disturb');
    await delivered();
    expect(pushesTo('/push/mary-1')).toHaveLength(0);
    // The feed still has both.
    const feed = ok(await t.gql('{ notifications { unreadCount } }', {}, mary));
    expect(feed.notifications.unreadCount).toBe(2);

    clock.advance(MINUTE_MS + 1);
    await send(t, olga, general, '@marypush afterwards');
    await delivered();
    expect(pushesTo('/push/mary-1')).toHaveLength(1);
    expect(browser.decrypt(pushesTo('/push/mary-1')[0]!.body)).toMatchObject({
      body: '@marypush afterwards',
    });
  });

  it('says only that a message arrived for an encrypted conversation', async () => {
    await giveDevice(t, olga.id);
    await giveDevice(t, mike.id);
    const conv = (await conversationOf(t, olga, [mike], { encrypted: true })).conversation;
    const message = {
      id: newId(),
      conversationId: conv.id,
      workspaceId: DIRECT_SPACE_ID,
      authorId: olga.id,
      text: null,
      ciphertext: 'ZW5jcnlwdGVkLWJvZHk',
      threadRootId: null,
      forwardedFromId: null,
      createdAt: clock.now().getTime(),
      editedAt: null,
      deletedAt: null,
      deletedBy: null,
      replyCount: 0,
      lastReplyAt: null,
      mentions: null,
    };
    await t.ctx.db.kysely.insertInto('message').values(message).execute();
    const before = pushesTo('/push/mike-1').length;
    t.ctx.services.notifications.messageCreated(message);
    await delivered();
    const pushes = pushesTo('/push/mike-1');
    expect(pushes).toHaveLength(before + 1);
    const payload = browser(mike).decrypt(pushes.at(-1)!.body);
    expect(payload).toMatchObject({
      kind: 'DIRECT',
      encrypted: true,
      title: 'New encrypted message',
      body: null,
    });
    expect(JSON.stringify(payload)).not.toContain('ZW5jcnlwdGVk');
  });

  it('drops a subscription the push service answers 410 for', async () => {
    const gone = new Browser(`${base}/gone/mike-2`);
    ok(await t.gql(REGISTER, { i: gone.input }, mike));
    await send(t, olga, general, '@mikepush once more');
    await delivered();
    expect(pushesTo('/gone/mike-2')).toHaveLength(1);
    const left = await t.ctx.db.kysely
      .selectFrom('push_subscription')
      .select('endpoint')
      .where('accountId', '=', mike.id)
      .execute();
    expect(left.map((r) => r.endpoint)).toEqual([`${base}/push/mike-1`]);
    await send(t, olga, general, '@mikepush and again');
    await delivered();
    expect(pushesTo('/gone/mike-2')).toHaveLength(1);
  });

  it('removes a subscription on request, and refuses a malformed one', async () => {
    const UNREGISTER = 'mutation($e: String!) { unregisterPushSubscription(endpoint: $e) }';
    const b = new Browser(`${base}/push/olga-1`);
    ok(await t.gql(REGISTER, { i: b.input }, olga));
    expect(ok(await t.gql(UNREGISTER, { e: b.endpoint }, mike)).unregisterPushSubscription).toBe(
      false,
    );
    expect(ok(await t.gql(UNREGISTER, { e: b.endpoint }, olga)).unregisterPushSubscription).toBe(
      true,
    );
    expectCode(await t.gql(REGISTER, { i: { ...b.input, p256dh: 'abc' } }, olga), 'VALIDATION');
    expectCode(await t.gql(REGISTER, { i: { ...b.input, auth: '!!' } }, olga), 'VALIDATION');
    expectCode(
      await t.gql(REGISTER, { i: { ...b.input, endpoint: 'ftp://push.example/x' } }, olga),
      'VALIDATION',
    );
  });
});

describe('web push endpoints on the default settings', () => {
  it('takes only https endpoints on public addresses, and never connects inward', async () => {
    const strict = await createTestApp({ clock });
    try {
      const a = await signUpAndIn(strict, { username: 'astrict' });
      const b = await signUpAndIn(strict, { username: 'bstrict' });
      const ws = (await createWorkspace(strict, a, 'Strict')).id;
      await inviteAndJoin(strict, a, ws, [b]);
      const input = new Browser(`${base}/push/strict`).input;
      const e1 = expectCode(await strict.gql(REGISTER, { i: input }, b), 'VALIDATION');
      expect(e1.message).toContain('https');
      const e2 = expectCode(
        await strict.gql(REGISTER, { i: { ...input, endpoint: 'https://127.0.0.1/x' } }, b),
        'VALIDATION',
      );
      expect(e2.message).toContain('public address');
      // A name that resolves inward is accepted here and refused when connecting.
      const port = (pushService.address() as AddressInfo).port;
      ok(
        await strict.gql(
          REGISTER,
          { i: { ...input, endpoint: `https://localhost:${port}/push/inward` } },
          b,
        ),
      );
      const before = received.length;
      await send(strict, a, await generalOf(strict, a, ws), '@bstrict hello');
      await strict.ctx.services.notifications.settled();
      await strict.ctx.services.webPush.settled();
      expect(received.length).toBe(before);
      const line = strict.logs.lines.find((l) => l.msg === 'web push failed');
      expect(JSON.stringify(line)).toContain('refused push endpoint');
    } finally {
      await strict.close();
    }
  });
});
