import fs from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { agentHeaders, createTestApp, type Agent, type TestApp } from '../_util/app.js';
import { signUpAndIn } from '../_util/seed.js';
import { seedWorkspace } from '../moderation/_helpers.js';

// Uploads over a real socket: the 413 comes while the client is still sending, a client that
// stops mid-upload leaves no temporary file, a Content-Length that lies either way and a part
// header of 1 MiB get a clear 4xx, never a 500.

const CREATE = `mutation($c: ID!) {
  createAttachment(input: { conversationId: $c, fileName: "f.txt", contentType: "text/plain" }) { attachmentId uploadToken } }`;
const MiB = 1024 * 1024;
const BOUNDARY = 'svcstreamboundary';

describe('uploads over a socket', () => {
  let t: TestApp;
  let alice: Agent;
  let channelId: string;
  let port: number;

  beforeAll(async () => {
    t = await createTestApp();
    alice = await signUpAndIn(t);
    channelId = (await seedWorkspace(t, alice)).channelId;
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    port = (t.app.server.address() as net.AddressInfo).port;
  });
  afterAll(async () => t?.close());

  const tmpDir = () => path.join(t.config.dataDir, 'blobs', 'tmp');
  const tmpFiles = async () => fs.readdir(tmpDir()).catch(() => [] as string[]);

  async function token() {
    const res = await t.gql(CREATE, { c: channelId }, alice);
    return res.body.data!.createAttachment as { attachmentId: string; uploadToken: string };
  }

  /** The form up to the file's bytes. */
  function head(a: { attachmentId: string; uploadToken: string }, padding = '') {
    return Buffer.from(
      `--${BOUNDARY}\r\nContent-Disposition: form-data; name="upload_token"\r\n\r\n${a.uploadToken}\r\n` +
        `--${BOUNDARY}\r\nContent-Disposition: form-data; name="attachment_id"\r\n\r\n${a.attachmentId}\r\n` +
        `--${BOUNDARY}\r\n${padding}Content-Disposition: form-data; name="file"; filename="f.txt"\r\n` +
        `Content-Type: text/plain\r\n\r\n`,
    );
  }
  const tail = Buffer.from(`\r\n--${BOUNDARY}--\r\n`);

  function requestHead(length: number | 'chunked') {
    const cookie = agentHeaders(alice);
    return (
      `POST /api/files/upload HTTP/1.1\r\nHost: 127.0.0.1\r\n` +
      `Content-Type: multipart/form-data; boundary=${BOUNDARY}\r\n` +
      `Cookie: ${cookie.cookie}\r\nX-CSRF-Token: ${cookie['x-csrf-token']}\r\n` +
      (length === 'chunked' ? 'Transfer-Encoding: chunked\r\n' : `Content-Length: ${length}\r\n`) +
      '\r\n'
    );
  }
  const chunk = (b: Buffer) =>
    Buffer.concat([Buffer.from(`${b.length.toString(16)}\r\n`), b, Buffer.from('\r\n')]);

  /** Opens a socket; `response` settles with everything read until the server closes or answers. */
  function open() {
    const socket = net.connect(port, '127.0.0.1');
    socket.on('error', () => undefined);
    let data = '';
    const response = new Promise<string>((resolve) => {
      socket.on('data', (d) => {
        data += d.toString('latin1');
        // One full answer: headers and a JSON body.
        if (/\r\n\r\n[\s\S]*\}/.test(data)) resolve(data);
      });
      socket.on('close', () => resolve(data));
    });
    return { socket, response };
  }

  async function until(check: () => Promise<boolean>) {
    for (let i = 0; i < 500; i++) {
      if (await check()) return;
      await new Promise((r) => setTimeout(r, 10));
    }
    throw new Error('condition not reached');
  }

  it('answers 413 as soon as the file passes 25 MiB, while the client is still sending', async () => {
    const a = await token();
    const { socket, response } = open();
    socket.write(requestHead('chunked'));
    socket.write(chunk(head(a)));
    const block = Buffer.alloc(MiB, 0x61);
    for (let i = 0; i < 25; i++) socket.write(chunk(block));
    socket.write(chunk(Buffer.from('ab')));
    // The body is not finished: no closing boundary, no last chunk.
    const answer = await response;
    expect(answer).toMatch(/^HTTP\/1\.1 413/);
    expect(answer).toContain('larger than 26214400 bytes');
    socket.destroy();
    await until(async () => (await tmpFiles()).length === 0);
  });

  it('removes the temporary file of a client that stops mid-upload', async () => {
    const a = await token();
    const { socket } = open();
    socket.write(requestHead('chunked'));
    socket.write(chunk(head(a)));
    socket.write(chunk(Buffer.alloc(MiB, 0x61)));
    await until(async () => (await tmpFiles()).length === 1);
    socket.destroy();
    await until(async () => (await tmpFiles()).length === 0);
    // The token was not spent: the same attachment uploads fine afterwards.
    const res = await t.inject({
      method: 'POST',
      url: '/api/files/upload',
      headers: {
        'content-type': `multipart/form-data; boundary=${BOUNDARY}`,
        ...agentHeaders(alice),
      },
      payload: Buffer.concat([head(a), Buffer.from('done'), tail]),
    });
    expect(res.statusCode).toBe(200);
  });

  it('answers 400 to a Content-Length shorter than the body', async () => {
    const a = await token();
    const body = Buffer.concat([head(a), Buffer.from('hello world'), tail]);
    const { socket, response } = open();
    socket.write(requestHead(body.length - 30));
    socket.write(body);
    // The server reads the declared bytes only: the form ends early (400 "malformed"), and the
    // bytes after it are no request (Node's own 400); whichever is written first, no fault.
    const answer = await response;
    expect(answer).toMatch(/^HTTP\/1\.1 400/);
    socket.destroy();
    expect(t.logs.lines.some((l) => l.msg === 'request failed')).toBe(false);
  });

  it('answers a Content-Length longer than the body, then the client gives up, without a fault', async () => {
    const a = await token();
    const body = Buffer.concat([head(a), Buffer.from('hello world'), tail]);
    const { socket, response } = open();
    socket.write(requestHead(body.length + 1000));
    socket.write(body);
    socket.end();
    const answer = await response;
    // The server may answer 400 before it sees the close, or close without an answer.
    expect(answer === '' || /^HTTP\/1\.1 400/.test(answer)).toBe(true);
    await until(async () => (await tmpFiles()).length === 0);
    expect(t.logs.lines.some((l) => l.msg === 'request failed')).toBe(false);
  });

  it('answers a part header of 1 MiB with a 4xx', async () => {
    const a = await token();
    const res = await t.inject({
      method: 'POST',
      url: '/api/files/upload',
      headers: {
        'content-type': `multipart/form-data; boundary=${BOUNDARY}`,
        ...agentHeaders(alice),
      },
      payload: Buffer.concat([
        head(a, `X-Padding: ${'a'.repeat(MiB)}\r\n`),
        Buffer.from('x'),
        tail,
      ]),
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toContain('no file');
  });
});
