import net from 'node:net';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { DIRECT_SPACE_ID } from '../../src/db/direct-space.js';
import { newId } from '../../src/lib/ids.js';
import { agentHeaders, createTestApp, type Agent, type TestApp } from '../_util/app.js';
import { signUpAndIn } from '../_util/seed.js';
import { seedMember, seedWorkspace } from '../moderation/_helpers.js';

import { bundleBytes, exampleBundleText, exampleVersion } from './_bundles.js';

// POST and GET /api/plugin-bundles (docs/plugins.md, "Upload and download"): who may, the
// answers, the exact bytes back with their cache headers, and bad input answered with the
// contract's status, never 500.

const TYPE = 'application/vnd.svc.plugin-bundle+json';
const MiB = 1024 * 1024;

describe('plugin bundle routes', () => {
  let t: TestApp;
  let owner: Agent;
  let mod: Agent;
  let member: Agent;
  let guest: Agent;
  let stranger: Agent;
  let ws: string;
  let other: string;

  beforeAll(async () => {
    t = await createTestApp();
    [owner, mod, member, guest, stranger] = await Promise.all(
      Array.from({ length: 5 }, () => signUpAndIn(t)),
    );
    ws = (await seedWorkspace(t, owner)).id;
    other = (await seedWorkspace(t, stranger)).id;
    await seedMember(t, ws, mod, 'moderator');
    await seedMember(t, ws, member, 'member');
    await seedMember(t, ws, guest, 'guest');
  });
  afterAll(async () => t?.close());

  const upload = (
    agent: Agent | null,
    body: Buffer | string,
    serverId = ws,
    headers: Record<string, string> = {},
  ) =>
    t.inject({
      method: 'POST',
      url: `/api/plugin-bundles/${serverId}`,
      headers: { 'content-type': TYPE, ...agentHeaders(agent), ...headers },
      payload: body,
    });
  const download = (agent: Agent | null, sha: string, serverId = ws, headers = {}) =>
    t.inject({
      method: 'GET',
      url: `/api/plugin-bundles/${serverId}/${sha}`,
      headers: { ...agentHeaders(agent), ...headers },
    });

  it('stores the example bundle of docs/plugins.md: 201, then 200 for the same bytes', async () => {
    const bytes = Buffer.from(exampleBundleText());
    const first = await upload(owner, bytes);
    expect(first.statusCode).toBe(201);
    const body = first.json();
    expect(body).toEqual({
      sha256: expect.stringMatching(/^[0-9a-f]{64}$/),
      size: bytes.length,
      url: `/api/plugin-bundles/${ws}/${body.sha256}`,
    });
    const again = await upload(mod, bytes);
    expect(again.statusCode).toBe(200);
    expect(again.json()).toEqual(body);
  });

  it('serves the exact bytes to every member, with the immutable cache headers', async () => {
    const bytes = exampleVersion('2.0.0-beta.1');
    const { sha256, url } = (await upload(mod, bytes)).json();
    for (const who of [owner, member, guest]) {
      const res = await t.inject({ method: 'GET', url, headers: agentHeaders(who) });
      expect(res.statusCode).toBe(200);
      expect(res.rawPayload.equals(bytes)).toBe(true);
      expect(res.headers['content-type']).toBe(TYPE);
      expect(res.headers['cache-control']).toBe('private, max-age=31536000, immutable');
      expect(res.headers.etag).toBe(`"${sha256}"`);
      expect(res.headers['content-length']).toBe(String(bytes.length));
    }
    const cached = await download(member, sha256, ws, { 'if-none-match': `"${sha256}"` });
    expect(cached.statusCode).toBe(304);
  });

  it('lets only Moderators and the owner upload; 404 for anyone not in the workspace', async () => {
    const bytes = exampleVersion('3.0.0');
    expect((await upload(member, bytes)).statusCode).toBe(403);
    expect((await upload(guest, bytes)).statusCode).toBe(403);
    const outside = await upload(stranger, bytes);
    expect(outside.statusCode).toBe(404);
    expect(outside.json()).toEqual({ error: 'workspace not found' });
    expect((await upload(owner, bytes, newId())).statusCode).toBe(404);
    expect((await upload(owner, bytes, 'not-an-id')).statusCode).toBe(404);
    expect((await upload(owner, bytes, DIRECT_SPACE_ID)).statusCode).toBe(404);
  });

  it('needs a session and the CSRF header', async () => {
    const bytes = exampleVersion('3.0.1');
    expect((await upload(null, bytes)).statusCode).toBe(401);
    const noCsrf = await upload(owner, bytes, ws, { 'x-csrf-token': '' });
    expect(noCsrf.statusCode).toBe(403);
    expect(noCsrf.json().error).toMatch(/csrf/);
    expect((await download(null, 'a'.repeat(64))).statusCode).toBe(401);
  });

  it('refuses another body type with 415 before reading it', async () => {
    const bytes = exampleVersion('3.0.2');
    for (const type of ['application/json', 'multipart/form-data; boundary=x', 'text/plain']) {
      const res = await upload(owner, bytes, ws, { 'content-type': type });
      expect(res.statusCode).toBe(415);
      expect(res.json().error).toContain(TYPE);
    }
    const none = await t.inject({
      method: 'POST',
      url: `/api/plugin-bundles/${ws}`,
      headers: agentHeaders(owner),
      payload: bytes,
    });
    expect(none.statusCode).toBe(415);
  });

  it('answers 413 for one byte over 8 MiB and takes exactly 8 MiB', async () => {
    const bundle = (size: number) => {
      const base = bundleBytes((b) => (b.client.files['pad.txt'] = { encoding: 'utf8', data: '' }));
      const pad = size - base.length;
      return Buffer.from(
        base
          .toString()
          .replace(
            '"pad.txt":{"encoding":"utf8","data":""}',
            `"pad.txt":{"encoding":"utf8","data":"${'x'.repeat(pad)}"}`,
          ),
      );
    };
    const exact = bundle(8 * MiB);
    expect(exact.length).toBe(8 * MiB);
    expect((await upload(owner, exact)).statusCode).toBe(201);
    const over = bundle(8 * MiB + 1);
    const res = await upload(owner, over);
    expect(res.statusCode).toBe(413);
    expect(res.json().error).toBe('the bundle is larger than 8388608 bytes');
  });

  it.each<[string, Buffer | string, RegExp]>([
    [
      'not JSON',
      'this is not json',
      /^not valid JSON: "t" where a value was expected at line 1, column 1$/,
    ],
    [
      'a duplicate key',
      exampleBundleText().replace('"version": "1.2.0"', '"version": "1.2.0", "version": "9.9.9"'),
      /duplicate key "version" at \/version/,
    ],
    [
      'deep nesting',
      '{"formatVersion":1,"x":' + '['.repeat(1_000_000) + ']'.repeat(1_000_000) + '}',
      /more than 32 deep/,
    ],
    [
      'a million keys',
      '{"x":[' + Array.from({ length: 1_000_000 }, () => '{"a":0}').join(',') + ']}',
      /more than 20000 object keys/,
    ],
    [
      'an empty body',
      '',
      /^not valid JSON: the text ends where a value was expected at line 1, column 1$/,
    ],
    ['a wrong format version', bundleBytes((b) => (b.formatVersion = 3)), /^\/formatVersion is 3/],
    [
      'a schema violation',
      bundleBytes((b) => (b.author.url = 'ftp://x')),
      /\/author\/url "ftp:\/\/x" does not match the pattern \^https\?:\/\//,
    ],
    [
      'an unknown capability',
      bundleBytes((b) => (b.capabilities = ['camera'])),
      /\/capabilities\/0 asks for the unknown capability "camera"/,
    ],
    [
      'duplicate command names',
      bundleBytes((b) => (b.contributes.commands[1].name = 'standup')),
      /\/contributes\/commands\/1\/name repeats the command name "standup"/,
    ],
    [
      'a field over its limit',
      bundleBytes((b) => (b.description = 'd'.repeat(1001))),
      /\/description is longer than the limit of 1000 characters/,
    ],
  ])('refuses %s with 422 and a reason', async (_name, body, reason) => {
    const res = await upload(owner, typeof body === 'string' ? Buffer.from(body) : body);
    expect(res.statusCode).toBe(422);
    expect(res.json().error).toMatch(reason);
  });

  it('answers 400 for a name that is not hex and 404 for another workspace’s bundle', async () => {
    const { sha256 } = (await upload(owner, exampleVersion('4.0.0'))).json();
    expect((await download(member, 'ABC')).statusCode).toBe(400);
    expect((await download(member, sha256.toUpperCase())).statusCode).toBe(400);
    expect((await download(member, '../../etc/passwd')).statusCode).toBe(404);
    expect((await download(member, 'f'.repeat(64))).statusCode).toBe(404);
    // The same bytes exist on disk, but the other workspace never uploaded them.
    const res = await download(stranger, sha256, other);
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ error: 'plugin bundle not found' });
    expect((await download(stranger, sha256)).statusCode).toBe(404);
    expect((await download(member, sha256, newId())).statusCode).toBe(404);
  });

  it('refuses the first byte past 8 MiB while the client is still sending', async () => {
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const port = (t.app.server.address() as net.AddressInfo).port;
    const socket = net.connect(port, '127.0.0.1');
    socket.on('error', () => undefined);
    const h = agentHeaders(owner);
    socket.write(
      `POST /api/plugin-bundles/${ws} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: ${TYPE}\r\n` +
        `Cookie: ${h.cookie}\r\nX-CSRF-Token: ${h['x-csrf-token']}\r\nTransfer-Encoding: chunked\r\n\r\n`,
    );
    let data = '';
    const answered = new Promise<string>((resolve) => {
      socket.on('data', (d) => {
        data += d.toString('latin1');
        if (/\r\n\r\n[\s\S]*\}/.test(data)) resolve(data);
      });
      socket.on('close', () => resolve(data));
    });
    // 9 MiB in 1 MiB chunks, and the body is never ended: the answer must come anyway.
    const chunk = Buffer.alloc(MiB, 0x20);
    for (let i = 0; i < 9 && !socket.destroyed; i++) {
      socket.write(
        Buffer.concat([
          Buffer.from(`${chunk.length.toString(16)}\r\n`),
          chunk,
          Buffer.from('\r\n'),
        ]),
      );
    }
    const answer = await answered;
    socket.destroy();
    expect(answer).toMatch(/^HTTP\/1.1 413/);
    expect(answer).toContain('the bundle is larger than 8388608 bytes');
  });
});
