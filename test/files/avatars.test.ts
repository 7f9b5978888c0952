import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { DAY_MS, HOUR_MS, ManualClock } from '../../src/lib/clock.js';
import { agentHeaders, createTestApp, type Agent, type TestApp } from '../_util/app.js';
import { signUpAndIn } from '../_util/seed.js';

import { filePart, makeImage, multipart, postMultipart, type Part } from './_image-upload.js';

const MiB = 1024 * 1024;
let t: TestApp;
const clock = new ManualClock();
let alice: Agent;
let bob: Agent;

beforeAll(async () => {
  t = await createTestApp({ clock });
  alice = await signUpAndIn(t);
  bob = await signUpAndIn(t);
});
afterAll(async () => {
  await t.close();
});

const upload = (agent: Agent | null, parts: Part[], headers?: Record<string, string>) =>
  postMultipart(t, '/api/files/avatar', agent, parts, headers);
const get = (url: string, agent: Agent | null = bob) =>
  t.inject({ method: 'GET', url, headers: agentHeaders(agent) });

async function avatarUrlOf(agent: Agent): Promise<string | null> {
  const res = await t.gql('{ me { avatarUrl } }', {}, agent);
  return res.body.data!.me.avatarUrl as string | null;
}

describe('POST /api/files/avatar', () => {
  it('re-encodes the image, drops its metadata and serves only the pixels back', async () => {
    const jpeg = await makeImage('jpeg', { width: 900, height: 600, exif: 'uploader-secret-gps' });
    expect(jpeg.includes('uploader-secret-gps')).toBe(true);
    const res = await upload(alice, [filePart(jpeg, 'image/jpeg', 'me.jpg')]);
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body.path).toMatch(/^avatars\/[0-9a-f]{64}\.jpg$/);
    expect(body.url).toBe(`/api/files/${body.path}`);
    expect(await avatarUrlOf(alice)).toBe(body.url);

    const got = await get(body.url);
    expect(got.statusCode).toBe(200);
    expect(got.headers['content-type']).toBe('image/jpeg');
    expect(got.headers['cache-control']).toBe('private, max-age=31536000, immutable');
    expect(got.headers['x-content-type-options']).toBe('nosniff');
    expect(got.rawPayload.length).toBe(body.size_bytes);
    expect(got.rawPayload.includes('uploader-secret-gps')).toBe(false);
    const meta = await sharp(got.rawPayload).metadata();
    expect(meta.exif).toBeUndefined();
    expect([meta.format, meta.width, meta.height]).toEqual(['jpeg', 512, 341]);
  });

  it('takes PNG, GIF and WebP too, each kept in its format', async () => {
    for (const [format, ext, type] of [
      ['png', 'png', 'image/png'],
      ['gif', 'gif', 'image/gif'],
      ['webp', 'webp', 'image/webp'],
    ] as const) {
      const res = await upload(bob, [filePart(await makeImage(format), type)]);
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().path).toMatch(new RegExp(`\\.${ext}$`));
      const got = await get(res.json().url, alice);
      expect((await sharp(got.rawPayload).metadata()).format).toBe(format);
    }
  });

  it('strips a payload appended to a valid image (a polyglot)', async () => {
    const html = '<html><script>alert(document.cookie)</script></html>';
    const png = Buffer.concat([await makeImage('png'), Buffer.from(html)]);
    const res = await upload(alice, [filePart(png, 'image/png')]);
    expect(res.statusCode, res.body).toBe(200);
    const got = await get(res.json().url);
    expect(got.rawPayload.includes('alert(document.cookie)')).toBe(false);
  });

  it('needs a session (401) and the CSRF header (403)', async () => {
    const png = await makeImage('png');
    expect((await upload(null, [filePart(png, 'image/png')])).statusCode).toBe(401);
    const noCsrf = await upload(alice, [filePart(png, 'image/png')], { 'x-csrf-token': '' });
    expect(noCsrf.statusCode).toBe(403);
    expect(noCsrf.json()).toEqual({ error: 'csrf validation failed' });
  });

  it('answers bad input with the contract statuses and clear messages, never 500', async () => {
    const png = await makeImage('png');
    const jpeg = await makeImage('jpeg');
    const svg = Buffer.from(
      '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>',
    );
    const overByOne = Buffer.alloc(2 * MiB + 1, 7);
    png.copy(overByOne);
    const atLimit = Buffer.alloc(2 * MiB, 7);
    png.copy(atLimit, 0, 0, 33);
    const cases: Array<[string, Part[], number, RegExp]> = [
      ['no file', [{ name: 'note', value: 'hi' }], 400, /one file/],
      ['no parts', [], 400, /one file/],
      ['two files', [filePart(png, 'image/png'), filePart(png, 'image/png')], 400, /exactly one/],
      ['empty file', [filePart(Buffer.alloc(0), 'image/png')], 400, /empty/],
      ['one byte over 2 MiB', [filePart(overByOne, 'image/png')], 413, /larger than 2097152/],
      ['2 MiB of broken PNG', [filePart(atLimit, 'image/png')], 400, /could not be/],
      ['text type', [filePart(Buffer.from('hello'), 'text/plain')], 415, /PNG, JPEG/],
      ['SVG with script', [filePart(svg, 'image/svg+xml')], 415, /PNG, JPEG/],
      ['SVG declared PNG', [filePart(svg, 'image/png')], 400, /could not be read/],
      ['PNG bytes declared JPEG', [filePart(png, 'image/jpeg')], 415, /png, not image\/jpeg/],
      ['JPEG bytes declared WebP', [filePart(jpeg, 'image/webp')], 415, /jpeg, not image/],
      ['truncated PNG', [filePart(png.subarray(0, 60), 'image/png')], 400, /could not be/],
      [
        'random bytes',
        [filePart(Buffer.from('GIF89a' + 'x'.repeat(100)), 'image/gif')],
        400,
        /could not be/,
      ],
    ];
    for (const [name, parts, status, message] of cases) {
      const res = await upload(alice, parts);
      expect(res.statusCode, `${name}: ${res.body}`).toBe(status);
      expect(res.json().error, name).toMatch(message);
    }
    // Nothing was left in the temporary folder.
    const tmp = path.join(t.config.dataDir, 'blobs', 'tmp');
    expect((await fs.readdir(tmp)).filter((f) => f.startsWith('upload-'))).toEqual([]);
  });

  it('refuses bodies that are not well-formed multipart', async () => {
    const png = await makeImage('png');
    const { body, contentType } = multipart([filePart(png, 'image/png')]);
    const post = (payload: Buffer | string, type: string) =>
      t.inject({
        method: 'POST',
        url: '/api/files/avatar',
        headers: { ...agentHeaders(alice), 'content-type': type },
        payload,
      });
    const json = await post('{"file":"x"}', 'application/json');
    expect(json.statusCode).toBe(415);
    const raw = await post(png, 'image/png');
    expect(raw.statusCode).toBe(415);
    const noBoundary = await post(body, 'multipart/form-data');
    expect(noBoundary.statusCode, noBoundary.body).toBe(400);
    const truncated = await post(body.subarray(0, body.length - 200), contentType);
    expect(truncated.statusCode, truncated.body).toBe(400);
    const unterminated = await post(body.subarray(0, body.length - 12), contentType);
    expect(unterminated.statusCode, unterminated.body).toBe(400);
    const fields = multipart(
      Array.from({ length: 10_000 }, (_, i) => ({ name: `f${i}`, value: 'x' })),
    );
    const flood = await post(fields.body, fields.contentType);
    // The same answer as the attachment upload's: the form has the wrong shape (400), not 413.
    expect(flood.statusCode, flood.body).toBe(400);
    expect(flood.json().error).toMatch(/^too many (fields|parts): send one image file/);
    const hugeHeader = Buffer.concat([
      Buffer.from(
        `--b\r\nContent-Disposition: form-data; name="file"; filename="${'a'.repeat(MiB)}"\r\nContent-Type: image/png\r\n\r\n`,
      ),
      png,
      Buffer.from('\r\n--b--\r\n'),
    ]);
    const header = await post(hugeHeader, 'multipart/form-data; boundary=b');
    expect(header.statusCode, header.body).toBeGreaterThanOrEqual(400);
    expect(header.statusCode).toBeLessThan(500);
  });
});

describe('GET /api/files/{path}', () => {
  it('needs a session', async () => {
    const res = await upload(alice, [filePart(await makeImage('png'), 'image/png')]);
    expect((await get(res.json().url, null)).statusCode).toBe(401);
  });

  it('refuses with 403 every path outside avatars/ and every traversal or encoding trick', async () => {
    const res = await upload(alice, [filePart(await makeImage('png'), 'image/png')]);
    const { path: good } = res.json() as { path: string };
    const sha = good.slice('avatars/'.length, -4);
    const tricks = [
      'etc/passwd',
      'blobs/tmp/x',
      `${sha}`,
      `avatars/..%2f..%2f..%2fetc%2fpasswd`,
      `avatars/%2e%2e/%2e%2e/svc.db`,
      `avatars%2f${sha}.png`,
      `avatars/%252e%252e/%252e%252e/etc/passwd`,
      `avatars/${sha}%2epng`,
      `avatars\\..\\..\\etc\\passwd`,
      `avatars%5c..%5c..%5cetc%5cpasswd`,
      `avatars/${sha}.png%00.txt`,
      `avatars/${sha}.png%00`,
      `/etc/passwd`,
      `%2fetc%2fpasswd`,
      `avatars//etc/passwd`,
      `avatars/${sha.toUpperCase()}.png`,
      `avatars/${sha}.svg`,
      `avatars/${sha}.png/`,
      `avatars/${sha}`,
      `AVATARS/${sha}.png`,
      `avatars/${sha}.png;.html`,
      'avatars/',
      '',
    ];
    for (const trick of tricks) {
      const r = await get(`/api/files/${trick}`);
      // inject() resolves dot segments itself (some then leave /api/files: 404); the request
      // line as sent is tested over a real socket (avatars-socket.test.ts).
      if (/\.\.|%2e%2e/i.test(trick)) {
        expect([403, 404], trick).toContain(r.statusCode);
        continue;
      }
      expect(r.statusCode, trick).toBe(403);
      expect(r.json().error, trick).toMatch(/only avatars/);
    }
    expect((await get(`/api/files/${good}`)).statusCode).toBe(200);
    expect((await get(`/api/files/${good}?x=1`)).statusCode).toBe(200);
  });

  it('answers 404 for a well-formed path no avatar names, even when its blob exists', async () => {
    const r1 = await upload(alice, [
      filePart(await makeImage('png', { color: '#111' }), 'image/png'),
    ]);
    const sha = (r1.json().path as string).slice(8, -4);
    // Another extension of the same blob is not an avatar anybody has.
    expect((await get(`/api/files/avatars/${sha}.gif`)).statusCode).toBe(404);
    expect((await get(`/api/files/avatars/${'0'.repeat(64)}.png`)).statusCode).toBe(404);
  });

  it('serves nothing through a symbolic link planted in the data directory', async () => {
    const outside = await fs.mkdtemp(path.join(os.tmpdir(), 'svc-outside-'));
    await fs.writeFile(path.join(outside, 'secret'), 'outside-secret');
    const blobs = t.ctx.services.files.blobs;
    // A blob file replaced by a link.
    const r1 = await upload(alice, [
      filePart(await makeImage('png', { color: '#123' }), 'image/png'),
    ]);
    const p1 = r1.json().path as string;
    const file1 = blobs.pathOf(p1.slice(8, -4));
    await fs.rm(file1);
    await fs.symlink(path.join(outside, 'secret'), file1);
    const g1 = await get(`/api/files/${p1}`);
    expect(g1.statusCode).toBe(404);
    expect(g1.body).not.toContain('outside-secret');
    // A shard folder replaced by a link to a folder holding a file of the right name.
    const r2 = await upload(alice, [
      filePart(await makeImage('png', { color: '#456' }), 'image/png'),
    ]);
    const p2 = r2.json().path as string;
    const sha2 = p2.slice(8, -4);
    const shard = path.dirname(blobs.pathOf(sha2));
    await fs.writeFile(path.join(outside, sha2), 'outside-secret');
    await fs.rm(shard, { recursive: true });
    await fs.symlink(outside, shard);
    const g2 = await get(`/api/files/${p2}`);
    expect(g2.statusCode).toBe(404);
    expect(g2.body).not.toContain('outside-secret');
    await fs.rm(shard);
    await fs.rm(outside, { recursive: true });
  });
});

describe('avatar lifetime', () => {
  it('lets a replaced avatar go with the sweep and keeps the current one', async () => {
    const carol = await signUpAndIn(t);
    const first = await upload(carol, [
      filePart(await makeImage('png', { color: '#a00' }), 'image/png'),
    ]);
    const second = await upload(carol, [
      filePart(await makeImage('png', { color: '#0a0' }), 'image/png'),
    ]);
    const blobs = t.ctx.services.files.blobs;
    const sha1 = (first.json().path as string).slice(8, -4);
    const sha2 = (second.json().path as string).slice(8, -4);
    expect(await avatarUrlOf(carol)).toBe(second.json().url);
    expect((await get(first.json().url)).statusCode).toBe(404);
    clock.advance(2 * HOUR_MS);
    await t.ctx.services.files.sweep();
    expect(await blobs.size(sha1)).toBeNull();
    expect(await blobs.size(sha2)).not.toBeNull();
  });

  it('is removed by the account purge', async () => {
    const dave = await signUpAndIn(t);
    const res = await upload(dave, [
      filePart(await makeImage('webp', { color: '#00a' }), 'image/webp'),
    ]);
    const sha = (res.json().path as string).slice(8, -5);
    const req = await t.gql(
      'mutation($c: String!) { requestAccountDeletion(input: { confirmUsername: $c }) { scheduledFor } }',
      { c: dave.username },
      dave,
    );
    expect(req.body.errors).toBeUndefined();
    clock.advance(15 * DAY_MS);
    expect(await t.ctx.services.accountDeletion.purgeDue()).toContain(dave.id);
    expect((await get(res.json().url)).statusCode).toBe(404);
    await t.ctx.services.files.sweep();
    expect(await t.ctx.services.files.blobs.size(sha)).toBeNull();
  });
});
