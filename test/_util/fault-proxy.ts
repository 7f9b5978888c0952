import net from 'node:net';

interface Pair {
  client: net.Socket;
  upstream: net.Socket | null;
}

/**
 * A TCP proxy a test puts between the server and PostgreSQL or Redis to make real network
 * faults: `reset()` breaks every open connection with a TCP RST, `refuse()` closes the listening
 * port (new connections get ECONNREFUSED), `stall()` stops moving bytes in both directions and
 * leaves new connections hanging, `pass()` restores normal service.
 */
export class FaultProxy {
  private readonly pairs = new Set<Pair>();
  private server: net.Server;
  private stalled = false;
  private listening = false;
  port = 0;

  private constructor(
    private readonly targetHost: string,
    private readonly targetPort: number,
  ) {
    this.server = this.createServer();
  }

  /** Starts a proxy to `host:port` on a free local port. */
  static async start(host: string, port: number): Promise<FaultProxy> {
    const proxy = new FaultProxy(host, port);
    await proxy.listen(0);
    return proxy;
  }

  /** `url` with its host and port replaced by the proxy's. */
  rewrite(url: string): string {
    const u = new URL(url);
    u.hostname = '127.0.0.1';
    u.port = String(this.port);
    return u.toString();
  }

  /** Connections currently open through the proxy. */
  get connections(): number {
    return this.pairs.size;
  }

  /** Breaks every open connection with a TCP RST, on both sides. */
  reset(): void {
    for (const pair of [...this.pairs]) this.drop(pair, true);
  }

  /** Resets open connections and stops listening: connecting gets ECONNREFUSED. */
  async refuse(): Promise<void> {
    this.reset();
    if (!this.listening) return;
    this.listening = false;
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  /** Stops forwarding bytes; new connections are accepted and then left waiting. */
  stall(): void {
    this.stalled = true;
    for (const pair of this.pairs) {
      pair.client.pause();
      pair.upstream?.pause();
    }
  }

  /** Back to normal: listens again, forwards again, and connects the connections left waiting. */
  async pass(): Promise<void> {
    this.stalled = false;
    if (!this.listening) {
      this.server = this.createServer();
      await this.listen(this.port);
    }
    for (const pair of this.pairs) {
      if (!pair.upstream) this.connectUpstream(pair);
      pair.client.resume();
      pair.upstream?.resume();
    }
  }

  async close(): Promise<void> {
    await this.refuse();
  }

  private createServer(): net.Server {
    return net.createServer((client) => {
      const pair: Pair = { client, upstream: null };
      this.pairs.add(pair);
      client.on('error', () => this.drop(pair, false));
      client.on('close', () => this.drop(pair, false));
      if (this.stalled) {
        client.pause();
        return;
      }
      this.connectUpstream(pair);
    });
  }

  private listen(port: number): Promise<void> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, '127.0.0.1', () => {
        this.server.off('error', reject);
        this.port = (this.server.address() as net.AddressInfo).port;
        this.listening = true;
        resolve();
      });
    });
  }

  private connectUpstream(pair: Pair): void {
    const upstream = net.connect(this.targetPort, this.targetHost);
    pair.upstream = upstream;
    upstream.on('error', () => this.drop(pair, false));
    upstream.on('close', () => this.drop(pair, false));
    // Forwarded by hand rather than piped, so that pause() stops a direction at once.
    pair.client.on('data', (chunk: Buffer) => {
      if (!upstream.destroyed) upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      if (!pair.client.destroyed) pair.client.write(chunk);
    });
    if (this.stalled) upstream.pause();
    pair.client.resume();
  }

  private drop(pair: Pair, reset: boolean): void {
    if (!this.pairs.delete(pair)) return;
    for (const socket of [pair.client, pair.upstream]) {
      if (!socket || socket.destroyed) continue;
      if (reset) socket.resetAndDestroy();
      else socket.destroy();
    }
  }
}

/** Resolves after `ms`. */
export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
