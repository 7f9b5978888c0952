import type { IncomingMessage } from 'node:http';
import net from 'node:net';

import type { FastifyInstance } from 'fastify';

/** How long and how much of a refused body the server reads and drops before it closes. */
export interface LingerLimits {
  /** Longest time from the answer to the close (nginx `lingering_time`, 30 s). */
  maxMs: number;
  /** Longest wait for the client's next bytes (nginx `lingering_timeout`, 5 s). */
  idleMs: number;
  /** Most body bytes dropped after the answer: twice the largest route limit (the relay's). */
  maxBytes: number;
}

export const LINGER_LIMITS: LingerLimits = {
  maxMs: 30_000,
  idleMs: 5_000,
  maxBytes: 64 * 1024 * 1024,
};

/**
 * Lingering close (docs/api.md, "Answers before the body is read"). A route that answers before
 * it read the whole body (413 past its limit, 401 or 403 before the body, 429) used to close the
 * connection at once, while the client was still writing: the kernel then answers the client's
 * next bytes with a reset, and Node's `http`, `fetch` and many proxies report EPIPE or
 * ECONNRESET without ever reading the answer. Instead the answer says `Connection: close`, the
 * server sends it and its end of stream (a FIN, so the client reads the answer whole), then keeps
 * reading and dropping what the client still sends until the client ends or stops, or the time or
 * byte bound of `limits` passes; only then is the socket destroyed. As nginx does.
 *
 * Node's HTTP server closes a `Connection: close` response's socket by calling the socket's
 * `destroySoon` once the response is out; for those requests that one socket's `destroySoon` is
 * replaced by the lingering close. Sockets still lingering when the app closes are destroyed so
 * shutdown does not wait for a slow client.
 */
export function registerLingeringClose(app: FastifyInstance, limits: LingerLimits): void {
  const lingering = new Set<net.Socket>();
  let closing = false;
  app.addHook('onSend', (request, reply, payload, done) => {
    const req = request.raw;
    const socket = reply.raw.socket;
    // inject() has no socket to close; a request whose body was read whole needs nothing.
    if (!req.complete && socket instanceof net.Socket && !lingering.has(socket)) {
      reply.header('connection', 'close');
      // A request stream destroyed by its reader no longer takes the body: close as before.
      if (req.destroyed) return done(null, payload);
      const linger = new Linger(req, socket, limits);
      const destroySoon = socket.destroySoon.bind(socket);
      socket.destroySoon = () => {
        if (closing || req.complete || req.destroyed || socket.destroyed) return destroySoon();
        lingering.add(socket);
        socket.once('close', () => lingering.delete(socket));
        linger.start();
      };
    }
    done(null, payload);
  });
  app.addHook('preClose', (done) => {
    closing = true;
    for (const socket of lingering) socket.destroy();
    done();
  });
}

/**
 * The rest of one answered request's body, read and dropped. Reading starts with the answer
 * (so Node's HTTP server hands the body's chunks to it rather than dropping them unseen, and
 * they can be counted); `start`, once the answer is out, sends the end of stream and arms the
 * bounds; the socket is destroyed when the body ends, the client ends or closes its side, or a
 * bound passes.
 */
class Linger {
  private dropped = 0;
  private started = false;
  private total: NodeJS.Timeout | null = null;
  private idle: NodeJS.Timeout | null = null;

  constructor(
    private readonly req: IncomingMessage,
    private readonly socket: net.Socket,
    private readonly limits: LingerLimits,
  ) {
    req.on('data', this.onData);
    req.resume();
  }

  start(): void {
    this.started = true;
    this.total = setTimeout(this.stop, this.limits.maxMs).unref();
    this.idle = setTimeout(this.stop, this.limits.idleMs).unref();
    this.socket.end();
    this.req.once('end', this.stop);
    this.socket.once('end', this.stop);
    this.socket.once('close', this.stop);
  }

  private readonly onData = (chunk: Buffer): void => {
    if (!this.started) return;
    this.dropped += chunk.length;
    if (this.dropped > this.limits.maxBytes) this.stop();
    else this.idle?.refresh();
  };

  private readonly stop = (): void => {
    if (this.total) clearTimeout(this.total);
    if (this.idle) clearTimeout(this.idle);
    this.req.off('data', this.onData);
    this.socket.destroy();
  };
}
