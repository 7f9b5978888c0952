import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';

import { WebSocketServer, type Server as WsServer } from 'ws';

import type { AppContext } from '../context.js';
import { SESSION_COOKIE } from '../auth/cookies.js';
import {
  DEPENDENCY_RETRY_AFTER_SECONDS,
  dependencyError,
  HTTP_STATUS_BY_CODE,
  logDependencyFailure,
} from '../errors.js';
import type { GraphqlExecutor } from '../graphql/executor.js';
import { firstHeader, readCookie } from '../lib/headers.js';
import type { SessionInfo } from '../auth/session.js';

import {
  CLOSE,
  Connection,
  ServerSocket,
  type ConnectionHost,
  type ConnectionLimits,
} from './connection.js';
import { ExpiryQueue } from './expiry-queue.js';
import { Fanout } from './fanout.js';
import { chooseProtocol } from './protocol.js';
import { refuseUpgrade } from './refuse.js';
import type { ClientInfo } from './subscription.js';
import { WriteBatcher } from './write-batcher.js';

export const WS_PATH = '/api/ws';
/** Contract: a client message over 256 KiB, whole or in fragments, closes with 1009. */
export const MAX_MESSAGE_BYTES = 256 * 1024;
/** Contract: more than 32 messages waiting for the server close with 1008. */
export const MAX_PENDING_MESSAGES = 32;
/** Sessions per recheck query (contract). */
export const RECHECK_CHUNK = 500;

export interface RealtimeOptions {
  /** Ping every socket this often; one that missed the previous ping is terminated. */
  keepAliveMs?: number;
  initTimeoutMs?: number;
  /** Outbound bytes a client may leave unread before it is closed with 4008. */
  maxBufferedBytes?: number;
  /** Overrides SVC_WS_SESSION_RECHECK_SECS (tests); 0 turns the recheck off. */
  recheckSecs?: number;
  /** Overrides SVC_WS_WRITE_GATHER_MS (tests); 0 turns gathering off. */
  writeGatherMs?: number;
}

export const REALTIME_DEFAULTS = {
  keepAliveMs: 30_000,
  initTimeoutMs: 10_000,
  maxBufferedBytes: 4 * 1024 * 1024,
} as const;

/**
 * GET /api/ws: checks the upgrade (the same deny list, address limit and origin rules as the
 * rest of /api, then the subprotocol, the session and the per-user connection cap) before
 * anything is upgraded, and owns the open connections: session ends, the session recheck,
 * keep-alive and shutdown.
 */
export class RealtimeServer implements ConnectionHost {
  readonly fanout: Fanout;
  readonly limits: ConnectionLimits;
  readonly writes: WriteBatcher;
  private readonly wss: WsServer<typeof ServerSocket>;
  private readonly connections = new Set<Connection>();
  private readonly bySession = new Map<string, Set<Connection>>();
  private readonly perAccount = new Map<string, number>();
  private readonly sockets = new Set<ServerSocket>();
  /** Closes each connection when its session expires, as read when it opened. */
  private readonly expiries: ExpiryQueue<Connection>;
  private readonly timers: NodeJS.Timeout[] = [];
  private readonly stopListening: () => void;
  private rechecking = false;
  private closing = false;

  constructor(
    readonly ctx: AppContext,
    readonly graphql: GraphqlExecutor,
    options: RealtimeOptions = {},
  ) {
    const { config } = ctx;
    this.fanout = new Fanout(
      ctx.bus,
      graphql.schema,
      ctx.log.child({ subsystem: 'fanout' }),
      graphql.compileAfterRuns,
    );
    this.writes = new WriteBatcher({
      maxDelayMs: options.writeGatherMs ?? config.rates.wsWriteGatherMs,
      load: () => ctx.requestLoad.sustained(),
      gathered: () => ctx.metrics.wsGatheredFlushes.inc(),
    });
    this.limits = {
      maxPendingMessages: MAX_PENDING_MESSAGES,
      maxBufferedBytes: options.maxBufferedBytes ?? REALTIME_DEFAULTS.maxBufferedBytes,
      initTimeoutMs: options.initTimeoutMs ?? REALTIME_DEFAULTS.initTimeoutMs,
      subscriptionsPerConnection: config.rates.subscriptionsPerConnection,
    };
    this.wss = new WebSocketServer({
      WebSocket: ServerSocket,
      noServer: true,
      maxPayload: MAX_MESSAGE_BYTES,
      perMessageDeflate: false,
      clientTracking: false,
      // Frames that arrive together are handed over together; the 32-waiting rule counts them.
      allowSynchronousEvents: true,
      handleProtocols: (protocols) => chooseProtocol([...protocols].join(',')) ?? false,
    });
    this.expiries = new ExpiryQueue(ctx.clock, (conn) => conn.endSession());
    this.stopListening = ctx.services.sessions.onEnded((ids) => this.endSessions(ids));
    const keepAlive = options.keepAliveMs ?? REALTIME_DEFAULTS.keepAliveMs;
    this.every(keepAlive, () => {
      for (const conn of this.connections) conn.heartbeat();
    });
    const recheckSecs = options.recheckSecs ?? config.rates.wsSessionRecheckSecs;
    if (recheckSecs > 0) this.every(recheckSecs * 1000, () => void this.recheck());
  }

  /** Handles upgrades on the API's HTTP server. */
  attach(server: Server): void {
    server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
      socket.on('error', ignore);
      this.upgrade(req, socket, head).catch((err: unknown) => {
        const dependency = dependencyError(err);
        if (dependency) {
          // The session lookup needs the database: 503 or 504 with Retry-After, like /api.
          logDependencyFailure(this.ctx.log, dependency, { phase: 'websocket upgrade' });
          refuseUpgrade(
            socket,
            HTTP_STATUS_BY_CODE[dependency.code],
            { error: dependency.code.toLowerCase(), message: dependency.message },
            { 'Retry-After': String(DEPENDENCY_RETRY_AFTER_SECONDS) },
          );
          return;
        }
        this.ctx.log.error({ err }, 'websocket upgrade failed');
        refuseUpgrade(socket, 500, { error: 'internal', message: 'the upgrade failed' });
      });
    });
  }

  /** Open connections on this process. */
  get connectionCount(): number {
    return this.connections.size;
  }

  private async upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    const { ctx } = this;
    const path = (req.url ?? '').split('?')[0];
    if (path !== WS_PATH) {
      refuseUpgrade(socket, 404, { error: 'not_found', message: `no WebSocket at ${path}` });
      return;
    }
    if (this.closing) {
      refuseUpgrade(socket, 503, { error: 'unavailable', message: 'the server is shutting down' });
      return;
    }
    // The same admission, under the same zone, as every request under /api.
    const admitted = ctx.admission.admit(
      {
        peer: req.socket.remoteAddress,
        encrypted: (req.socket as { encrypted?: boolean }).encrypted === true,
        headers: req.headers,
      },
      'api',
    );
    if (!admitted.ok) {
      refuseUpgrade(
        socket,
        admitted.status,
        admitted.body,
        admitted.retryAfterSeconds === null
          ? {}
          : { 'Retry-After': String(admitted.retryAfterSeconds) },
      );
      return;
    }
    const ip = admitted.clientAddress;
    if (!chooseProtocol(req.headers['sec-websocket-protocol'])) {
      refuseUpgrade(socket, 400, {
        error: 'unsupported_subprotocol',
        message: 'ask for the graphql-transport-ws (or legacy graphql-ws) subprotocol',
      });
      return;
    }
    const token = readCookie(firstHeader(req.headers.cookie), SESSION_COOKIE);
    const session = token ? await ctx.services.sessions.resolve(token) : null;
    if (socket.destroyed) return;
    if (!session || !token) {
      refuseUpgrade(socket, 401, { error: 'unauthenticated', message: 'sign in first' });
      return;
    }
    if (this.closing) {
      refuseUpgrade(socket, 503, { error: 'unavailable', message: 'the server is shutting down' });
      return;
    }
    const cap = ctx.config.rates.wsConnectionsPerUser;
    if (cap !== null && (this.perAccount.get(session.accountId) ?? 0) >= cap) {
      refuseUpgrade(socket, 429, { error: 'too_many_connections' });
      return;
    }
    // handleUpgrade calls back synchronously, so nothing can take the place counted above.
    this.wss.handleUpgrade(req, socket, head, (ws) =>
      this.accept(ws, session, {
        ip,
        userAgent: firstHeader(req.headers['user-agent'])?.slice(0, 512) ?? null,
        token,
      }),
    );
  }

  private accept(ws: ServerSocket, session: SessionInfo, client: ClientInfo): void {
    this.sockets.add(ws);
    const conn = new Connection(ws, session, client, this);
    this.connections.add(conn);
    this.expiries.add(conn);
    let set = this.bySession.get(session.sessionId);
    if (!set) {
      set = new Set();
      this.bySession.set(session.sessionId, set);
    }
    set.add(conn);
    this.perAccount.set(session.accountId, (this.perAccount.get(session.accountId) ?? 0) + 1);
    this.ctx.metrics.wsConnections.inc();
    this.ctx.services.presence.connected(session.accountId);
    conn.debug('websocket connected', { account: session.accountId });
  }

  socketClosed(ws: ServerSocket): void {
    this.sockets.delete(ws);
  }

  released(conn: Connection): void {
    if (!this.connections.delete(conn)) return;
    this.expiries.remove(conn);
    const set = this.bySession.get(conn.session.sessionId);
    set?.delete(conn);
    if (set?.size === 0) this.bySession.delete(conn.session.sessionId);
    const left = (this.perAccount.get(conn.accountId) ?? 1) - 1;
    if (left > 0) this.perAccount.set(conn.accountId, left);
    else this.perAccount.delete(conn.accountId);
    this.ctx.metrics.wsConnections.dec();
    this.ctx.services.presence.disconnected(conn.accountId);
    conn.debug('websocket released');
  }

  /** Closes the connections of sessions that ended (4401, after completing their streams). */
  endSessions(sessionIds: readonly string[]): void {
    for (const id of sessionIds) {
      const set = this.bySession.get(id);
      if (!set) continue;
      for (const conn of [...set]) conn.endSession();
    }
  }

  /** Rereads the sessions of open connections, 500 per query; closes those that ended. */
  async recheck(): Promise<void> {
    if (this.rechecking || this.closing) return;
    this.rechecking = true;
    try {
      const ids = [...this.bySession.keys()];
      for (let i = 0; i < ids.length; i += RECHECK_CHUNK) {
        const dead = await this.ctx.services.sessions.deadAmong(ids.slice(i, i + RECHECK_CHUNK));
        this.endSessions(dead);
      }
    } catch (err) {
      this.ctx.log.warn({ err }, 'websocket session recheck failed');
    } finally {
      this.rechecking = false;
    }
  }

  /** Stops accepting, closes every connection with 1001 and waits (briefly) for the sockets. */
  async close(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    for (const t of this.timers) clearInterval(t);
    this.expiries.close();
    this.stopListening();
    for (const conn of [...this.connections]) conn.close(CLOSE.goingAway);
    const deadline = Date.now() + 2_000;
    while (this.sockets.size > 0 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    for (const ws of this.sockets) ws.terminate();
    this.sockets.clear();
    await new Promise<void>((resolve) => this.wss.close(() => resolve()));
  }

  private every(ms: number, fn: () => void): void {
    const timer = setInterval(fn, ms);
    timer.unref();
    this.timers.push(timer);
  }
}

/** An error on a socket being checked must not throw; once upgraded, ws listens for its own. */
function ignore(): void {}

/** Attaches the WebSocket endpoint to the API server (main.ts calls it after listen). */
export function attachRealtime(
  ctx: AppContext,
  graphql: GraphqlExecutor,
  server: Server,
  options: RealtimeOptions = {},
): RealtimeServer {
  const realtime = new RealtimeServer(ctx, graphql, options);
  realtime.attach(server);
  return realtime;
}
