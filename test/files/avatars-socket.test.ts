import net from 'node:net';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { startTestServer } from '../_util/app.js';
import { DEFAULT_PASSWORD } from '../_util/seed.js';

import { filePart, makeImage, multipart } from './_image-upload.js';

// Over a real socket: the request line reaches the server exactly as written (inject would
// normalize `..`), and an over-long upload is answered before the client has sent it all.

let server: Awaited<ReturnType<typeof startTestServer>>;
let cookie = '';
let csrf = '';

beforeAll(async () => {
  server = await startTestServer();
  await server.ctx.services.accounts.createPasswordAccount({
    username: 'sockuser',
    password: DEFAULT_PASSWORD,
  });
  const res = await fetch(`${server.url}/api`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      query: `mutation { login(input: { username: "sockuser", password: "${DEFAULT_PASSWORD}" }) { csrfToken } }`,
    }),
  });
  const body = (await res.json()) as { data: { login: { csrfToken: string } } };
  csrf = body.data.login.csrfToken;
  cookie = res.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ');
});
afterAll(async () => {
  await server.stop();
});

/** Sends raw bytes and reads until the server closes or answers completely. */
function raw(head: string, body: Buffer = Buffer.alloc(0), opts: { stopAfter?: number } = {}) {
  return new Promise<{ status: number; text: string; sent: number }>((resolve, reject) => {
    const socket = net.connect(server.address.port, '127.0.0.1');
    const chunks: Buffer[] = [];
    let sent = 0;
    socket.on('data', (d) => chunks.push(d));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('latin1');
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0);
      if (!status) reject(new Error(`no answer: ${text}`));
      else resolve({ status, text, sent });
    });
    socket.write(head);
    // The body in 64 KiB pieces, each written only once the socket took the last one.
    const step = 64 * 1024;
    const pump = () => {
      while (sent < body.length && !socket.destroyed) {
        const piece = body.subarray(sent, sent + step);
        sent += piece.length;
        if (opts.stopAfter !== undefined && sent >= opts.stopAfter) return;
        if (!socket.write(piece)) return void socket.once('drain', pump);
      }
    };
    pump();
  });
}

const getLine = (target: string) =>
  `GET ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\nCookie: ${cookie}\r\nConnection: close\r\n\r\n`;

describe('over a real socket', () => {
  it('refuses raw traversal request targets with 403', async () => {
    for (const target of [
      '/api/files/avatars/../../../../etc/passwd',
      '/api/files/../../etc/passwd',
      '/api/files/avatars/..%2f..%2fsvc.db',
      '/api/files/avatars/%2e%2e/%2e%2e/svc.db',
      '/api/files/avatars/%252e%252e/svc.db',
      '/api/files/avatars\\..\\..\\svc.db',
      `/api/files/avatars/${'a'.repeat(64)}.png%00`,
      '/api/files//etc/passwd',
      '/api/files/avatars/./' + 'a'.repeat(64) + '.png',
    ]) {
      const res = await raw(getLine(target));
      expect([403, 404], target).toContain(res.status);
      expect(res.text, target).not.toContain('root:');
      if (target.startsWith('/api/files/')) expect(res.status, target).toBe(403);
    }
  });

  it('answers 413 for an upload past 2 MiB without waiting for the rest of it', async () => {
    const png = await makeImage('png');
    const big = Buffer.alloc(64 * 1024 * 1024, 1);
    png.copy(big);
    const { body, contentType } = multipart([filePart(big, 'image/png')]);
    const head =
      `POST /api/files/avatar HTTP/1.1\r\nHost: 127.0.0.1\r\nCookie: ${cookie}\r\n` +
      `X-CSRF-Token: ${csrf}\r\nContent-Type: ${contentType}\r\nContent-Length: ${body.length}\r\n\r\n`;
    const res = await raw(head, body);
    expect(res.status).toBe(413);
    expect(res.text).toContain('larger than 2097152 bytes');
    // The server closed the connection long before 64 MiB went out.
    expect(res.sent).toBeLessThan(32 * 1024 * 1024);
  });
});
