import http from 'node:http';
import net from 'node:net';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { agentHeaders, createTestApp, type Agent, type TestApp } from '../_util/app.js';
import { signUpAndIn } from '../_util/seed.js';
import { seedWorkspace } from '../moderation/_helpers.js';

// A body over a route's limit is answered 413 while the client is still sending; the server
// then reads and discards the rest for a bounded time and size (as nginx's lingering close), so
// Node's own `fetch` and `http.request`, streaming their bodies, read the answer instead of
// EPIPE or ECONNRESET (contract: Errors, "File and plugin bundle routes"; Relay; Limits).

const MiB = 1024 * 1024;
const BOUNDARY = 'svclingerboundary';
const CREATE = `mutation($c: ID!) {
  createAttachment(input: { conversationId: $c, fileName: "f.txt", contentType: "text/plain" }) { attachmentId uploadToken } }`;

/** Short bounds, so the test sees them act: each case below leaves at most 2 MiB to drop. */
const LINGER = { maxBytes: 4 * MiB, idleMs: 400, maxMs: 3000 };

interface Answer {
  status: number;
  body: string;
}

/** Yields `head`, `total` bytes of filler in 64 KiB chunks, then `tail`. */
function* bodyChunks(head: Buffer, total: number, tail: Buffer): Generator<Buffer> {
  yield head;
  const block = Buffer.alloc(64 * 1024, 0x61);
  for (let sent = 0; sent < total; sent += block.length) {
    yield block.subarray(0, Math.min(block.length, total - sent));
  }
  yield tail;
}

/** `http.request` writing the body as fast as the socket takes it; the answer it read. */
function viaHttpRequest(
  url: string,
  headers: Record<string, string>,
  chunks: Iterable<Buffer>,
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'POST', headers });
    let answered: Answer | null = null;
    const timer = setTimeout(() => reject(new Error('no answer within 10 s')), 10_000);
    req.on('response', (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => {
        answered = { status: res.statusCode!, body };
        clearTimeout(timer);
        resolve(answered);
      });
      res.on('error', (err) => {
        clearTimeout(timer);
        reject(err);
      });
    });
    req.on('error', (err) => {
      if (answered) return;
      clearTimeout(timer);
      reject(err);
    });
    const it = chunks[Symbol.iterator]();
    const pump = (): void => {
      for (;;) {
        const next = it.next();
        if (next.done) {
          req.end();
          return;
        }
        if (!req.write(next.value)) {
          req.once('drain', pump);
          return;
        }
      }
    };
    pump();
  });
}

/** Node's `fetch` streaming the body (duplex: 'half'); the answer it read. */
async function viaFetch(
  url: string,
  headers: Record<string, string>,
  chunks: Iterable<Buffer>,
): Promise<Answer> {
  const it = chunks[Symbol.iterator]();
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      const next = it.next();
      if (next.done) controller.close();
      else controller.enqueue(next.value);
    },
  });
  const res = await fetch(url, {
    method: 'POST',
    headers,
    body,
    duplex: 'half',
    signal: AbortSignal.timeout(10_000),
  } as RequestInit);
  return { status: res.status, body: await res.text() };
}

describe('413 that clients can read', () => {
  let t: TestApp;
  let alice: Agent;
  let base: string;
  let channelId: string;
  let serverId: string;
  /** The server's side of each connection, by the client's port. */
  const serverSockets = new Map<number, net.Socket>();

  beforeAll(async () => {
    t = await createTestApp({ http: { lingering: LINGER } });
    alice = await signUpAndIn(t);
    const ws = await seedWorkspace(t, alice);
    channelId = ws.channelId;
    serverId = ws.id;
    t.app.server.on('connection', (s: net.Socket) => serverSockets.set(s.remotePort!, s));
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(t.app.server.address() as net.AddressInfo).port}`;
  });
  afterAll(async () => t?.close());

  async function uploadHead(): Promise<Buffer> {
    const res = await t.gql(CREATE, { c: channelId }, alice);
    const a = res.body.data!.createAttachment as { attachmentId: string; uploadToken: string };
    return Buffer.from(
      `--${BOUNDARY}\r\nContent-Disposition: form-data; name="upload_token"\r\n\r\n${a.uploadToken}\r\n` +
        `--${BOUNDARY}\r\nContent-Disposition: form-data; name="attachment_id"\r\n\r\n${a.attachmentId}\r\n` +
        `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="f.txt"\r\n` +
        `Content-Type: text/plain\r\n\r\n`,
    );
  }

  const cases: {
    name: string;
    path: () => string;
    headers: () => Record<string, string>;
    head: () => Promise<Buffer>;
    tail: Buffer;
    bytes: number;
    error: RegExp;
  }[] = [
    {
      name: 'POST /api past 1 MiB',
      path: () => '/api',
      headers: () => ({ 'content-type': 'application/json', ...agentHeaders(alice) }),
      head: async () => Buffer.from('{"query":"'),
      tail: Buffer.from('"}'),
      bytes: 3 * MiB,
      error: /larger than/,
    },
    {
      name: 'an upload past 25 MiB',
      path: () => '/api/files/upload',
      headers: () => ({
        'content-type': `multipart/form-data; boundary=${BOUNDARY}`,
        ...agentHeaders(alice),
      }),
      head: uploadHead,
      tail: Buffer.from(`\r\n--${BOUNDARY}--\r\n`),
      bytes: 26 * MiB,
      error: /larger than 26214400 bytes/,
    },
    {
      name: 'a plugin bundle past 8 MiB',
      path: () => `/api/plugin-bundles/${serverId}`,
      headers: () => ({
        'content-type': 'application/vnd.svc.plugin-bundle+json',
        ...agentHeaders(alice),
      }),
      head: async () => Buffer.from('{"manifest":"'),
      tail: Buffer.from('"}'),
      bytes: 9 * MiB,
      error: /larger than 8388608 bytes/,
    },
    {
      name: 'a relayed body past 32 MiB',
      path: () => '/api/remote/peer.example:8443/api',
      headers: () => ({ 'content-type': 'application/json', ...agentHeaders(alice) }),
      head: async () => Buffer.from('{"query":"'),
      tail: Buffer.from('"}'),
      bytes: 33 * MiB,
      error: /too_large/,
    },
  ];

  for (const c of cases) {
    it(`answers ${c.name} with a 413 that http.request reads`, async () => {
      const answer = await viaHttpRequest(
        base + c.path(),
        c.headers(),
        bodyChunks(await c.head(), c.bytes, c.tail),
      );
      expect(answer.status, answer.body).toBe(413);
      expect(answer.body).toMatch(c.error);
    });

    it(`answers ${c.name} with a 413 that fetch reads`, async () => {
      const answer = await viaFetch(
        base + c.path(),
        c.headers(),
        bodyChunks(await c.head(), c.bytes, c.tail),
      );
      expect(answer.status, answer.body).toBe(413);
      expect(answer.body).toMatch(c.error);
    });
  }

  /**
   * A raw client that keeps its side open when the server ends its own (as a proxy may): the
   * request head for `/api` declaring `length` bytes. `answered` settles with what it read once
   * a whole answer is in; `serverClosed` once the server destroyed its socket.
   */
  function rawApiClient(length: number) {
    const socket = net.connect({
      port: Number(new URL(base).port),
      host: '127.0.0.1',
      allowHalfOpen: true,
    });
    let data = '';
    let ended = false;
    let error: string | null = null;
    const answered = new Promise<string>((resolve) => {
      socket.on('data', (d) => {
        data += d.toString('latin1');
        if (/\r\n\r\n[\s\S]*\}/.test(data)) resolve(data);
      });
    });
    socket.on('end', () => (ended = true));
    socket.on('error', (err: NodeJS.ErrnoException) => (error = err.code ?? err.message));
    const serverClosed = new Promise<void>((resolve) => {
      socket.once('connect', () => {
        const server = serverSockets.get(socket.localPort!);
        if (!server || server.destroyed) resolve();
        else server.once('close', () => resolve());
      });
    });
    const cookie = agentHeaders(alice);
    socket.write(
      `POST /api HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n` +
        `Cookie: ${cookie.cookie}\r\nX-CSRF-Token: ${cookie['x-csrf-token']}\r\n` +
        `Content-Length: ${length}\r\n\r\n`,
    );
    return { socket, answered, serverClosed, state: () => ({ ended, error }) };
  }

  const write = (socket: net.Socket, bytes: Buffer) =>
    new Promise<void>((resolve, reject) =>
      socket.write(bytes, (err) => (err ? reject(err) : resolve())),
    );
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
  const within = <T>(p: Promise<T>, ms: number) =>
    Promise.race([
      p,
      sleep(ms).then(() => {
        throw new Error(`not within ${ms} ms`);
      }),
    ]);

  it('keeps reading a refused body after the answer, then closes without a reset', async () => {
    const client = rawApiClient(3 * MiB);
    await write(client.socket, Buffer.alloc(64 * 1024, 0x61));
    const answer = await within(client.answered, 5000);
    expect(answer).toMatch(/^HTTP\/1\.1 413/);
    expect(answer.toLowerCase()).toContain('connection: close');
    // Well after the answer the server still takes the body: no reset, no broken pipe.
    await sleep(150);
    await write(client.socket, Buffer.alloc(3 * MiB - 64 * 1024, 0x61));
    await within(client.serverClosed, 5000);
    expect(client.state()).toEqual({ ended: true, error: null });
    client.socket.destroy();
  });

  it('closes once the client sends more than the bound after the answer', async () => {
    const client = rawApiClient(100 * MiB);
    await write(client.socket, Buffer.alloc(64 * 1024, 0x61));
    expect(await within(client.answered, 5000)).toMatch(/^HTTP\/1\.1 413/);
    let sent = 0;
    let closed = false;
    void client.serverClosed.then(() => (closed = true));
    const block = Buffer.alloc(256 * 1024, 0x61);
    try {
      while (!closed && sent < 100 * MiB - 64 * 1024) {
        await within(write(client.socket, block), 5000);
        sent += block.length;
      }
    } catch {
      // The reset of a socket the server closed.
    }
    await within(client.serverClosed, 5000);
    expect(sent).toBeGreaterThanOrEqual(LINGER.maxBytes - 64 * 1024);
    expect(sent).toBeLessThan(20 * MiB);
    client.socket.destroy();
  });

  it('closes once the client stops sending for the idle bound', async () => {
    const client = rawApiClient(3 * MiB);
    await write(client.socket, Buffer.alloc(64 * 1024, 0x61));
    expect(await within(client.answered, 5000)).toMatch(/^HTTP\/1\.1 413/);
    await within(client.serverClosed, LINGER.idleMs + 2000);
    expect(client.state().ended).toBe(true);
    client.socket.destroy();
  });
});
