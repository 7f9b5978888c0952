import fs from 'node:fs/promises';
import path from 'node:path';

import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { DAY_MS, HOUR_MS, ManualClock } from '../../src/lib/clock.js';
import { agentHeaders, createTestApp, type Agent, type TestApp } from '../_util/app.js';
import { signUpAndIn } from '../_util/seed.js';
import { codeOf, seedMember, seedWorkspace } from '../moderation/_helpers.js';

// Attachments end to end (docs/files.md, "Attachments"): createAttachment, the multipart upload,
// finalizeAttachment, Message.attachments, the download and its headers, and bad input.

const CREATE = `mutation($c: ID!, $n: String!, $t: String) {
  createAttachment(input: { conversationId: $c, fileName: $n, contentType: $t }) { attachmentId uploadToken } }`;
const FINALIZE = `mutation($a: ID!, $m: ID!) {
  finalizeAttachment(input: { attachmentId: $a, messageId: $m }) { id fileName contentType sizeBytes width height url } }`;
const SEND = `mutation($c: ID!, $t: String!) { sendMessage(input: { conversationId: $c, text: $t }) { id } }`;
const LIST = `query($c: ID!) { messages(conversationId: $c) { items { id attachments { id fileName contentType sizeBytes width height } } } }`;
const MiB = 1024 * 1024;

type Part =
  { name: string; value: string } | { name: string; file: Buffer; fileName: string; type: string };

/** A real multipart/form-data body. */
function multipart(parts: Part[], boundary = 'svcboundary1234'): Buffer {
  const chunks: Buffer[] = [];
  for (const p of parts) {
    if ('value' in p) {
      chunks.push(
        Buffer.from(
          `--${boundary}\r\nContent-Disposition: form-data; name="${p.name}"\r\n\r\n${p.value}\r\n`,
        ),
      );
    } else {
      chunks.push(
        Buffer.from(
          `--${boundary}\r\nContent-Disposition: form-data; name="${p.name}"; filename="${p.fileName}"\r\nContent-Type: ${p.type}\r\n\r\n`,
        ),
        p.file,
        Buffer.from('\r\n'),
      );
    }
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return Buffer.concat(chunks);
}

const png = (w: number, h: number) =>
  sharp({ create: { width: w, height: h, channels: 3, background: { r: 200, g: 10, b: 10 } } })
    .png()
    .toBuffer();

describe('attachments', () => {
  let t: TestApp;
  let alice: Agent;
  let bob: Agent;
  let eve: Agent;
  let channelId: string;
  let workspaceId: string;
  const clock = new ManualClock(Date.UTC(2030, 0, 1));

  beforeAll(async () => {
    t = await createTestApp({ clock });
    alice = await signUpAndIn(t);
    bob = await signUpAndIn(t);
    eve = await signUpAndIn(t);
    const ws = await seedWorkspace(t, alice);
    workspaceId = ws.id;
    channelId = ws.channelId;
    await seedMember(t, ws.id, bob, 'member', [channelId]);
  });
  afterAll(async () => t?.close());

  async function create(agent: Agent, fileName = 'photo.png', type: string | null = null) {
    const res = await t.gql(CREATE, { c: channelId, n: fileName, t: type }, agent);
    expect(res.body.errors).toBeUndefined();
    return res.body.data!.createAttachment as { attachmentId: string; uploadToken: string };
  }

  function upload(agent: Agent | null, body: Buffer, headers: Record<string, string> = {}) {
    return t.inject({
      method: 'POST',
      url: '/api/files/upload',
      headers: {
        'content-type': 'multipart/form-data; boundary=svcboundary1234',
        ...agentHeaders(agent),
        ...headers,
      },
      payload: body,
    });
  }

  const form = (
    a: { attachmentId: string; uploadToken: string },
    file: Buffer,
    type: string,
    name = 'f',
  ) =>
    multipart([
      { name: 'upload_token', value: a.uploadToken },
      { name: 'attachment_id', value: a.attachmentId },
      { name: 'file', file, fileName: name, type },
    ]);

  async function sendMessage(agent: Agent, text = 'see attached') {
    const res = await t.gql(SEND, { c: channelId, t: text }, agent);
    return res.body.data!.sendMessage.id as string;
  }

  it('uploads, finalizes, lists and downloads an image', async () => {
    const image = await png(40, 30);
    const a = await create(alice, 'Grüße "rot" 1.png');
    const res = await upload(alice, form(a, image, 'image/png'));
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ size_bytes: image.length });

    const messageId = await sendMessage(alice);
    const fin = await t.gql(FINALIZE, { a: a.attachmentId, m: messageId }, alice);
    expect(fin.body.data!.finalizeAttachment).toMatchObject({
      contentType: 'image/png',
      sizeBytes: image.length,
      width: 40,
      height: 30,
      url: `/api/attachments/${a.attachmentId}/download`,
    });
    const list = await t.gql(LIST, { c: channelId }, bob);
    const item = list.body.data!.messages.items.find((m: { id: string }) => m.id === messageId);
    expect(item.attachments).toEqual([
      {
        id: a.attachmentId,
        fileName: 'Grüße "rot" 1.png',
        contentType: 'image/png',
        sizeBytes: image.length,
        width: 40,
        height: 30,
      },
    ]);

    const url = `/api/attachments/${a.attachmentId}/download`;
    const dl = await t.inject({ method: 'GET', url, headers: agentHeaders(bob) });
    expect(dl.statusCode).toBe(200);
    expect(dl.rawPayload.equals(image)).toBe(true);
    expect(dl.headers['content-type']).toBe('image/png');
    expect(dl.headers['content-disposition']).toBe(
      `attachment; filename="Gr__e _rot_ 1.png"; filename*=UTF-8''Gr%C3%BC%C3%9Fe%20%22rot%22%201.png`,
    );
    expect(dl.headers['x-content-type-options']).toBe('nosniff');
    expect(dl.headers['content-security-policy']).toBe("sandbox; default-src 'none'");
    const etag = dl.headers.etag as string;
    expect(etag).toMatch(/^"[0-9a-f]{64}"$/);

    const part = await t.inject({
      method: 'GET',
      url,
      headers: { ...agentHeaders(bob), range: 'bytes=10-19' },
    });
    expect(part.statusCode).toBe(206);
    expect(part.headers['content-range']).toBe(`bytes 10-19/${image.length}`);
    expect(part.rawPayload.equals(image.subarray(10, 20))).toBe(true);
    const tail = await t.inject({
      method: 'GET',
      url,
      headers: { ...agentHeaders(bob), range: 'bytes=-5' },
    });
    expect(tail.rawPayload.equals(image.subarray(image.length - 5))).toBe(true);
    const past = await t.inject({
      method: 'GET',
      url,
      headers: { ...agentHeaders(bob), range: `bytes=${image.length}-` },
    });
    expect(past.statusCode).toBe(416);
    expect(past.headers['content-range']).toBe(`bytes */${image.length}`);
    const cached = await t.inject({
      method: 'GET',
      url,
      headers: { ...agentHeaders(bob), 'if-none-match': etag },
    });
    expect(cached.statusCode).toBe(304);

    // Not a member of the conversation, or no such attachment: the same 404.
    const other = await t.inject({ method: 'GET', url, headers: agentHeaders(eve) });
    expect(other.statusCode).toBe(404);
    const unknown = await t.inject({
      method: 'GET',
      url: '/api/attachments/01890000-0000-7000-8000-000000000000/download',
      headers: agentHeaders(bob),
    });
    expect(unknown.statusCode).toBe(404);
    expect((await t.inject({ method: 'GET', url })).statusCode).toBe(401);
  });

  it('refuses tokens that are missing, unknown, of another user or attachment, or used', async () => {
    const file = Buffer.from('hello\n');
    const a = await create(alice, 'a.txt', 'text/plain');
    const b = await create(bob, 'b.txt', 'text/plain');
    const noToken = multipart([
      { name: 'attachment_id', value: a.attachmentId },
      { name: 'file', file, fileName: 'a.txt', type: 'text/plain' },
    ]);
    const r1 = await upload(alice, noToken);
    expect(r1.statusCode).toBe(400);
    expect(r1.json().error).toContain('upload_token');
    const unknown = await upload(
      alice,
      form({ ...a, uploadToken: 'x'.repeat(43) }, file, 'text/plain'),
    );
    expect(unknown.statusCode).toBe(403);
    // Bob's token for Bob's attachment, sent by Alice; Alice's token with Bob's attachment.
    expect((await upload(alice, form(b, file, 'text/plain'))).statusCode).toBe(403);
    const crossed = await upload(
      alice,
      form({ attachmentId: b.attachmentId, uploadToken: a.uploadToken }, file, 'text/plain'),
    );
    expect(crossed.statusCode).toBe(403);
    expect((await upload(alice, form(a, file, 'text/plain'))).statusCode).toBe(200);
    const again = await upload(alice, form(a, file, 'text/plain'));
    expect(again.statusCode).toBe(409);
    expect(again.json().error).toContain('already used');
    // No CSRF header: 403 before anything is read.
    const { 'x-csrf-token': _drop, ...noCsrf } = agentHeaders(bob);
    const csrf = await t.inject({
      method: 'POST',
      url: '/api/files/upload',
      headers: { 'content-type': 'multipart/form-data; boundary=svcboundary1234', ...noCsrf },
      payload: form(b, file, 'text/plain'),
    });
    expect(csrf.statusCode).toBe(403);
    expect(csrf.json()).toEqual({ error: 'csrf validation failed' });
  });

  it('refuses an expired token', async () => {
    const a = await create(alice, 'late.txt', 'text/plain');
    clock.advance(HOUR_MS + 1);
    const res = await upload(alice, form(a, Buffer.from('late'), 'text/plain'));
    expect(res.statusCode).toBe(403);
    expect(res.json().error).toContain('expired');
  });

  it.each([
    [
      'no file',
      (a: { attachmentId: string; uploadToken: string }) =>
        multipart([
          { name: 'upload_token', value: a.uploadToken },
          { name: 'attachment_id', value: a.attachmentId },
        ]),
      400,
      'no file',
    ],
    [
      'two files',
      (a: { attachmentId: string; uploadToken: string }) =>
        multipart([
          { name: 'upload_token', value: a.uploadToken },
          { name: 'attachment_id', value: a.attachmentId },
          { name: 'file', file: Buffer.from('one'), fileName: 'a.txt', type: 'text/plain' },
          { name: 'file2', file: Buffer.from('two'), fileName: 'b.txt', type: 'text/plain' },
        ]),
      400,
      'exactly one file',
    ],
    [
      'an empty file',
      (a: { attachmentId: string; uploadToken: string }) => form(a, Buffer.alloc(0), 'text/plain'),
      400,
      'empty',
    ],
    [
      'bytes that are not the declared type',
      (a: { attachmentId: string; uploadToken: string }) =>
        form(a, Buffer.from('%PDF-1.4 not really'), 'image/png'),
      415,
      'image/png',
    ],
    [
      'SVG with script',
      (a: { attachmentId: string; uploadToken: string }) =>
        form(
          a,
          Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>'),
          'image/svg+xml',
        ),
      415,
      'svg',
    ],
    [
      'octet-stream in a plaintext conversation',
      (a: { attachmentId: string; uploadToken: string }) =>
        form(a, Buffer.from([1, 2, 3]), 'application/octet-stream'),
      415,
      'encrypted',
    ],
    [
      '10,000 fields',
      (a: { attachmentId: string; uploadToken: string }) =>
        multipart([
          ...Array.from({ length: 10_000 }, (_, i) => ({ name: `f${i}`, value: 'x' })),
          { name: 'upload_token', value: a.uploadToken },
        ]),
      400,
      'too many',
    ],
    [
      'a truncated body',
      (a: { attachmentId: string; uploadToken: string }) =>
        form(a, Buffer.from('hello'), 'text/plain').subarray(0, 200),
      400,
      'malformed',
    ],
  ])('answers %s', async (_what, body, status, message) => {
    const a = await create(alice, 'x.bin');
    const res = await upload(alice, body(a));
    expect(res.statusCode).toBe(status);
    expect(res.json().error.toLowerCase()).toContain(message.toLowerCase());
    // Nothing was recorded: the token still works for a good file.
    const ok = await upload(alice, form(a, Buffer.from('fine'), 'text/plain'));
    expect(ok.statusCode).toBe(200);
  });

  it('answers wrong content types and a multipart without boundary', async () => {
    const json = await t.inject({
      method: 'POST',
      url: '/api/files/upload',
      headers: { 'content-type': 'application/json', ...agentHeaders(alice) },
      payload: '{}',
    });
    expect(json.statusCode).toBe(415);
    const text = await t.inject({
      method: 'POST',
      url: '/api/files/upload',
      headers: { 'content-type': 'text/plain', ...agentHeaders(alice) },
      payload: 'x',
    });
    expect(text.statusCode).toBe(415);
    const noBoundary = await upload(alice, Buffer.from('--x\r\n'), {
      'content-type': 'multipart/form-data',
    });
    expect(noBoundary.statusCode).toBe(400);
    expect(noBoundary.json().error).toContain('oundary');
  });

  it('refuses a file one byte over 25 MiB with 413', async () => {
    const a = await create(alice, 'big.txt', 'text/plain');
    const res = await upload(alice, form(a, Buffer.alloc(25 * MiB + 1, 0x61), 'text/plain'));
    expect(res.statusCode).toBe(413);
    const exact = await upload(alice, form(a, Buffer.alloc(25 * MiB, 0x61), 'text/plain'));
    expect(exact.statusCode).toBe(200);
    expect(exact.json()).toEqual({ size_bytes: 25 * MiB });
  });

  it('refuses a declared Content-Length past the limit before reading', async () => {
    const a = await create(alice, 'big.txt', 'text/plain');
    const res = await upload(alice, form(a, Buffer.from('small'), 'text/plain'), {
      'content-length': String(26 * MiB),
    });
    expect(res.statusCode).toBe(413);
  });

  it('deletes attachments with their message, by their uploader, and expires unfinalized ones', async () => {
    const a = await create(alice, 'gone.txt', 'text/plain');
    expect(
      (await upload(alice, form(a, Buffer.from('gone with the message'), 'text/plain'))).statusCode,
    ).toBe(200);
    const messageId = await sendMessage(alice);
    await t.gql(FINALIZE, { a: a.attachmentId, m: messageId }, alice);
    const del = await t.gql(
      'mutation($m: ID!) { deleteMessage(messageId: $m) { id } }',
      { m: messageId },
      alice,
    );
    expect(del.body.errors).toBeUndefined();
    const db = t.ctx.db.kysely;
    const rows = () =>
      db.selectFrom('attachment').select('id').where('id', '=', a.attachmentId).execute();
    expect(await rows()).toEqual([]);

    const b = await create(alice, 'mine.txt', 'text/plain');
    expect(
      codeOf(
        await t.gql(
          'mutation($a: ID!) { deleteAttachment(attachmentId: $a) }',
          { a: b.attachmentId },
          bob,
        ),
      ),
    ).toBe('NOT_FOUND');
    const mine = await t.gql(
      'mutation($a: ID!) { deleteAttachment(attachmentId: $a) }',
      { a: b.attachmentId },
      alice,
    );
    expect(mine.body.data).toEqual({ deleteAttachment: true });

    const c = await create(alice, 'never.txt', 'text/plain');
    clock.advance(DAY_MS + 1);
    expect(await t.ctx.scheduler.runOnce('attachment-expiry')).toBe(true);
    expect(
      await db.selectFrom('attachment').select('id').where('id', '=', c.attachmentId).execute(),
    ).toEqual([]);
  });

  it('removes attachment rows when the workspace is deleted', async () => {
    const ws = await seedWorkspace(t, alice);
    const res = await t.gql(CREATE, { c: ws.channelId, n: 'w.txt', t: 'text/plain' }, alice);
    const id = res.body.data!.createAttachment.attachmentId;
    const name = (
      await t.ctx.db.kysely
        .selectFrom('workspace')
        .select('name')
        .where('id', '=', ws.id)
        .executeTakeFirstOrThrow()
    ).name;
    const del = await t.gql(
      'mutation($w: ID!, $n: String!) { deleteWorkspace(input: { serverId: $w, confirmName: $n }) { deleted } }',
      { w: ws.id, n: name },
      alice,
    );
    expect(del.body.errors).toBeUndefined();
    expect(
      await t.ctx.db.kysely.selectFrom('attachment').select('id').where('id', '=', id).execute(),
    ).toEqual([]);
    expect(workspaceId).toBeTruthy();
  });
});

describe('attachments while the feature is off', () => {
  it('refuses routes and mutations, still lists attachments, deletes nothing', async () => {
    const on = await createTestApp();
    const alice = await signUpAndIn(on);
    const ws = await seedWorkspace(on, alice);
    const created = await on.gql(
      CREATE,
      { c: ws.channelId, n: 'keep.txt', t: 'text/plain' },
      alice,
    );
    const a = created.body.data!.createAttachment;
    const up = await on.inject({
      method: 'POST',
      url: '/api/files/upload',
      headers: {
        'content-type': 'multipart/form-data; boundary=svcboundary1234',
        ...agentHeaders(alice),
      },
      payload: multipart([
        { name: 'upload_token', value: a.uploadToken },
        { name: 'attachment_id', value: a.attachmentId },
        { name: 'file', file: Buffer.from('kept'), fileName: 'keep.txt', type: 'text/plain' },
      ]),
    });
    expect(up.statusCode).toBe(200);
    const sent = await on.gql(SEND, { c: ws.channelId, t: 'file' }, alice);
    const messageId = sent.body.data!.sendMessage.id;
    await on.gql(FINALIZE, { a: a.attachmentId, m: messageId }, alice);
    const database = on.database;
    await on.app.close();
    await on.ctx.close();

    const off = await createTestApp({ database, env: { SVC_FEATURES_DISABLED: 'attachments' } });
    try {
      const me = await (await import('../_util/seed.js')).signIn(off, alice.username);
      const dl = await off.inject({
        method: 'GET',
        url: `/api/attachments/${a.attachmentId}/download`,
        headers: agentHeaders(me),
      });
      expect(dl.statusCode).toBe(403);
      expect(dl.json()).toMatchObject({ code: 'FEATURE_DISABLED', feature: 'attachments' });
      const upOff = await off.inject({
        method: 'POST',
        url: '/api/files/upload',
        headers: {
          'content-type': 'multipart/form-data; boundary=svcboundary1234',
          ...agentHeaders(me),
        },
        payload: multipart([{ name: 'upload_token', value: 'x' }]),
      });
      expect(upOff.statusCode).toBe(403);
      expect(upOff.json().feature).toBe('attachments');
      const create = await off.gql(CREATE, { c: ws.channelId, n: 'x.txt', t: null }, me);
      expect(create.body.errors![0]!.extensions).toMatchObject({
        code: 'FEATURE_DISABLED',
        feature: 'attachments',
      });
      const list = await off.gql(LIST, { c: ws.channelId }, me);
      const item = list.body.data!.messages.items.find((m: { id: string }) => m.id === messageId);
      expect(item.attachments.map((x: { fileName: string }) => x.fileName)).toEqual(['keep.txt']);
      // The expiry job deletes nothing while the feature is off.
      expect(await off.ctx.services.attachments.expireUnfinalized()).toBe(0);
      const blobs = await fs.readdir(path.join(off.config.dataDir, 'blobs'));
      expect(blobs.length).toBeGreaterThan(0);
    } finally {
      await off.close();
    }
  });
});
