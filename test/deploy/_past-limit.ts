import tls from 'node:tls';

import type { HttpsAnswer } from './_proxies.js';

/** How much of a body is written at a time; the client reads what came between two chunks. */
const CHUNK = 256 * 1024;
/** Tries of a POST whose connection was reset before any byte of an answer. */
const ATTEMPTS = 5;

/**
 * A POST of a body past a limit to the proxy on 127.0.0.1:`port` (TLS, trusting `ca`), read as
 * a client that keeps what it was told does: the answer to such a body comes before the body is
 * all sent (a 413), and the proxy then closes the connection on the rest. Node's `https` client
 * reports that close as a write error (`EPIPE`, `ECONNRESET`) and drops an answer it already
 * received; here every byte read is kept, the body is written a chunk at a time so the answer is
 * read as it arrives, writing stops once an answer head came, and write errors after that are
 * the expected close. A connection reset before any byte of an answer is tried again, at most
 * five times: a write that meets the reset destroys the socket before the answer waiting in the
 * kernel is read, as it can for any client still writing.
 */
export async function postPastLimit(
  port: number,
  ca: Buffer,
  urlPath: string,
  headers: Record<string, string>,
  body: Buffer,
): Promise<HttpsAnswer> {
  for (let attempt = 1; ; attempt++) {
    const { received, error } = await exchange(port, ca, urlPath, headers, body);
    if (received.length > 0) return parse(received);
    if (attempt >= ATTEMPTS) {
      throw error ?? new Error(`POST ${urlPath}: closed without an answer`);
    }
  }
}

function exchange(
  port: number,
  ca: Buffer,
  urlPath: string,
  headers: Record<string, string>,
  body: Buffer,
): Promise<{ received: Buffer; error: Error | null }> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let error: Error | null = null;
    let answered = false;
    const socket = tls.connect({ host: '127.0.0.1', port, ca, ALPNProtocols: ['http/1.1'] });
    const timer = setTimeout(() => socket.destroy(new Error(`POST ${urlPath} timed out`)), 30_000);
    socket.on('data', (d: Buffer) => {
      chunks.push(d);
      if (!answered && Buffer.concat(chunks).includes('\r\n\r\n')) answered = true;
    });
    socket.on('error', (err) => (error ??= err));
    socket.on('close', () => {
      clearTimeout(timer);
      resolve({ received: Buffer.concat(chunks), error });
    });
    socket.once('secureConnect', () => {
      const head = [
        `POST ${urlPath} HTTP/1.1`,
        `host: 127.0.0.1:${port}`,
        `content-length: ${body.length}`,
        'connection: close',
        ...Object.entries(headers)
          .filter(([k]) => !/^(host|content-length|connection)$/i.test(k))
          .map(([k, v]) => `${k}: ${v}`),
      ].join('\r\n');
      socket.write(`${head}\r\n\r\n`);
      let at = 0;
      // One chunk a turn of the event loop, so an answer that arrived is read (and stops the
      // writing) before the next write can meet the reset that follows it: a write that fails
      // destroys the socket with the answer still unread in the kernel.
      const write = () => {
        if (at >= body.length || answered || socket.destroyed) return;
        const chunk = body.subarray(at, at + CHUNK);
        at += chunk.length;
        if (socket.write(chunk)) setImmediate(write);
        else socket.once('drain', () => setImmediate(write));
      };
      write();
    });
  });
}

/** An HTTP/1.1 answer read back from its bytes (a length, chunks, or up to the close). */
function parse(raw: Buffer): HttpsAnswer {
  const end = raw.indexOf('\r\n\r\n');
  if (end < 0) throw new Error(`an answer cut short: ${raw.toString('latin1').slice(0, 200)}`);
  const [statusLine, ...lines] = raw.subarray(0, end).toString('latin1').split('\r\n');
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine ?? '')?.[1] ?? 0);
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    if (colon > 0)
      headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  let rest = raw.subarray(end + 4);
  if (/chunked/i.test(headers['transfer-encoding'] ?? '')) {
    const parts: Buffer[] = [];
    for (;;) {
      const lineEnd = rest.indexOf('\r\n');
      const size = lineEnd < 0 ? 0 : parseInt(rest.subarray(0, lineEnd).toString('latin1'), 16);
      if (!size) break;
      parts.push(rest.subarray(lineEnd + 2, lineEnd + 2 + size));
      rest = rest.subarray(lineEnd + 2 + size + 2);
    }
    rest = Buffer.concat(parts);
  } else if (headers['content-length'] !== undefined) {
    rest = rest.subarray(0, Number(headers['content-length']));
  }
  return { status, headers, body: rest.toString('utf8') };
}
