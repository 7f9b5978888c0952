import fs from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { agentHeaders, createTestApp, type Agent, type TestApp } from '../_util/app.js';
import { signUpAndIn } from '../_util/seed.js';
import { seedMember, seedWorkspace } from '../moderation/_helpers.js';

// `POST /api/files/upload` takes its parts in any order (contract, File routes, sets none): a file
// before `upload_token` and `attachment_id` is streamed into the blob store's temporary folder,
// checked once the fields are in, and deleted when they are wrong or never come.

const CREATE = `mutation($c: ID!) {
  createAttachment(input: { conversationId: $c, fileName: "f.txt", contentType: "text/plain" }) { attachmentId uploadToken } }`;
const BOUNDARY = 'svcorderboundary';
const MiB = 1024 * 1024;

type Token = { attachmentId: string; uploadToken: string };
const field = (name: string, value: string) =>
  Buffer.from(
    `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`,
  );
const fileHead = () =>
  Buffer.from(
    `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="f.txt"\r\n` +
      `Content-Type: text/plain\r\n\r\n`,
  );
const filePart = (bytes: Buffer) => Buffer.concat([fileHead(), bytes, Buffer.from('\r\n')]);
const end = Buffer.from(`--${BOUNDARY}--\r\n`);

describe('upload parts in any order', () => {
  let t: TestApp;
  let alice: Agent;
  let bob: Agent;
  let channelId: string;
  let port: number;

  beforeAll(async () => {
    t = await createTestApp();
    alice = await signUpAndIn(t);
    bob = await signUpAndIn(t);
    const ws = await seedWorkspace(t, alice);
    channelId = ws.channelId;
    await seedMember(t, ws.id, bob, 'member', [channelId]);
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    port = (t.app.server.address() as net.AddressInfo).port;
  });
  afterAll(async () => t?.close());

  const blobs = () => path.join(t.config.dataDir, 'blobs');
  const tmpFiles = async () => fs.readdir(path.join(blobs(), 'tmp')).catch(() => [] as string[]);
  /** Every committed blob (the sharded folders, not tmp). */
  async function storedBlobs(): Promise<string[]> {
    const found: string[] = [];
    for await (const name of t.ctx.services.files.blobs.list()) found.push(name);
    return found;
  }

  async function token(agent = alice): Promise<Token> {
    const res = await t.gql(CREATE, { c: channelId }, agent);
    return res.body.data!.createAttachment as Token;
  }

  function upload(body: Buffer, agent = alice) {
    return t.inject({
      method: 'POST',
      url: '/api/files/upload',
      headers: {
        'content-type': `multipart/form-data; boundary=${BOUNDARY}`,
        ...agentHeaders(agent),
      },
      payload: body,
    });
  }

  async function download(a: Token): Promise<string> {
    const SEND = `mutation($c: ID!) { sendMessage(input: { conversationId: $c, text: "x" }) { id } }`;
    const sent = await t.gql(SEND, { c: channelId }, alice);
    const FIN = `mutation($a: ID!, $m: ID!) { finalizeAttachment(input: { attachmentId: $a, messageId: $m }) { id } }`;
    const fin = await t.gql(FIN, { a: a.attachmentId, m: sent.body.data!.sendMessage.id }, alice);
    expect(fin.body.errors).toBeUndefined();
    const res = await t.inject({
      method: 'GET',
      url: `/api/attachments/${a.attachmentId}/download`,
      headers: agentHeaders(alice),
    });
    expect(res.statusCode).toBe(200);
    return res.body;
  }

  it.each([
    [
      'the file first',
      (a: Token, f: Buffer) => [
        filePart(f),
        field('upload_token', a.uploadToken),
        field('attachment_id', a.attachmentId),
      ],
    ],
    [
      'the file between the fields',
      (a: Token, f: Buffer) => [
        field('attachment_id', a.attachmentId),
        filePart(f),
        field('upload_token', a.uploadToken),
      ],
    ],
    [
      'the fields first',
      (a: Token, f: Buffer) => [
        field('upload_token', a.uploadToken),
        field('attachment_id', a.attachmentId),
        filePart(f),
      ],
    ],
  ])('stores an upload with %s', async (_what, parts) => {
    const a = await token();
    const text = `bytes for ${_what}\n`;
    const res = await upload(Buffer.concat([...parts(a, Buffer.from(text)), end]));
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ size_bytes: Buffer.byteLength(text) });
    expect(await download(a)).toBe(text);
    expect(await tmpFiles()).toEqual([]);
  });

  it('refuses a file whose later fields are wrong or missing, and deletes it', async () => {
    const a = await token();
    const b = await token(bob);
    const before = await storedBlobs();
    const unique = (n: number) => Buffer.from(`never stored ${n} ${Math.random()}\n`);
    const cases: [Buffer[], number, string][] = [
      [
        [
          filePart(unique(1)),
          field('upload_token', 'x'.repeat(43)),
          field('attachment_id', a.attachmentId),
        ],
        403,
        'not valid',
      ],
      [
        [
          filePart(unique(2)),
          field('upload_token', b.uploadToken),
          field('attachment_id', b.attachmentId),
        ],
        403,
        'not valid',
      ],
      [[filePart(unique(3)), field('attachment_id', a.attachmentId)], 400, 'upload_token'],
      [[filePart(unique(4)), field('upload_token', a.uploadToken)], 400, 'attachment_id'],
      [[filePart(unique(5))], 400, 'upload_token'],
      [
        [
          field('upload_token', a.uploadToken),
          filePart(unique(6)),
          field('upload_token', a.uploadToken),
        ],
        400,
        'once',
      ],
      [
        [filePart(unique(7)), filePart(unique(8)), field('upload_token', a.uploadToken)],
        400,
        'exactly one file',
      ],
    ];
    for (const [parts, status, message] of cases) {
      const res = await upload(Buffer.concat([...parts, end]));
      expect(res.statusCode, message).toBe(status);
      expect(res.json().error).toContain(message);
      expect(await tmpFiles()).toEqual([]);
    }
    expect(await storedBlobs()).toEqual(before);
    // Nothing was spent: the token still takes a file sent first.
    const ok = await upload(
      Buffer.concat([
        filePart(Buffer.from('fine\n')),
        field('upload_token', a.uploadToken),
        field('attachment_id', a.attachmentId),
        end,
      ]),
    );
    expect(ok.statusCode).toBe(200);
  });

  it('refuses a file sent first that is not the declared type once the fields come', async () => {
    const a = await token();
    const res = await upload(
      Buffer.concat([
        filePart(Buffer.from('%PDF-1.4 not text')),
        field('upload_token', a.uploadToken),
        field('attachment_id', a.attachmentId),
        end,
      ]),
    );
    expect(res.statusCode).toBe(415);
    expect(await tmpFiles()).toEqual([]);
  });

  it('holds a file sent first on disk while the fields are still to come', async () => {
    const a = await token();
    const socket = net.connect(port, '127.0.0.1');
    socket.on('error', () => undefined);
    let data = '';
    const answer = new Promise<string>((resolve) => {
      socket.on('data', (d) => {
        data += d.toString('latin1');
        if (/\r\n\r\n[\s\S]*\}/.test(data)) resolve(data);
      });
      socket.on('close', () => resolve(data));
    });
    const cookie = agentHeaders(alice);
    socket.write(
      `POST /api/files/upload HTTP/1.1\r\nHost: 127.0.0.1\r\n` +
        `Content-Type: multipart/form-data; boundary=${BOUNDARY}\r\n` +
        `Cookie: ${cookie.cookie}\r\nX-CSRF-Token: ${cookie['x-csrf-token']}\r\n` +
        'Transfer-Encoding: chunked\r\n\r\n',
    );
    const chunk = (b: Buffer) =>
      socket.write(
        Buffer.concat([Buffer.from(`${b.length.toString(16)}\r\n`), b, Buffer.from('\r\n')]),
      );
    const bytes = Buffer.alloc(3 * MiB, 0x61);
    chunk(fileHead());
    chunk(bytes);
    // The file's bytes reach the temporary file before any field arrives.
    for (let i = 0; ; i++) {
      const names = await tmpFiles();
      const sizes = await Promise.all(
        names.map(async (n) => (await fs.stat(path.join(blobs(), 'tmp', n))).size),
      );
      if (sizes.some((s) => s >= 2 * MiB)) break;
      if (i > 500) throw new Error('the file was not streamed to disk');
      await new Promise((r) => setTimeout(r, 10));
    }
    chunk(Buffer.concat([Buffer.from('\r\n'), field('upload_token', a.uploadToken)]));
    chunk(Buffer.concat([field('attachment_id', a.attachmentId), end]));
    socket.write('0\r\n\r\n');
    const res = await answer;
    socket.destroy();
    expect(res).toMatch(/^HTTP\/1\.1 200/);
    expect(res).toContain(`{"size_bytes":${3 * MiB}}`);
    expect(await tmpFiles()).toEqual([]);
  });
});
