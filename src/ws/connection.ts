import {
  createSourceEventStream,
  getOperationAST,
  GraphQLError,
  type ExecutionResult,
  type GraphQLFormattedError,
  type OperationTypeNode,
} from 'graphql';
import type { Duplex } from 'node:stream';

import type { Logger } from 'pino';
import { WebSocket, type RawData } from 'ws';

import type { AppContext } from '../context.js';
import { AppError, validation } from '../errors.js';
import { parseBounded } from '../graphql/document-limits.js';
import { GraphqlExecutor, type GraphqlRequest } from '../graphql/executor.js';
import { codedError, formatError } from '../graphql/format-error.js';
import { newId } from '../lib/ids.js';
import type { SessionInfo } from '../auth/session.js';

import type { Fanout } from './fanout.js';
import { isLiveSource } from '../events/live-stream.js';
import type { Expiring } from './expiry-queue.js';
import { SocketRequestContext, Subscription, type ClientInfo } from './subscription.js';
import type { WriteBatcher } from './write-batcher.js';
import {
  codecFor,
  GRAPHQL_TRANSPORT_WS_PROTOCOL,
  LEGACY_KEEP_ALIVE,
  legacyProtocolError,
  type ClientCommand,
  type Codec,
  type OperationPayload,
  type ProtocolName,
} from './protocol.js';

/** Close codes and reasons the server uses (docs/realtime.md lists them). */
export const CLOSE = {
  normal: [1000, 'terminated'],
  goingAway: [1001, 'going away'],
  tooManyMessages: [1008, 'too many messages'],
  messageTooLarge: [1009, 'message too large'],
  internal: [1011, 'internal error'],
  slowConsumer: [4008, 'slow consumer'],
  invalidMessage: [4400, 'Invalid message received'],
  unauthorized: [4401, 'Unauthorized'],
  sessionEnded: [4401, 'session ended'],
  initTimeout: [4408, 'Connection initialisation timeout'],
  tooManyInits: [4429, 'Too many initialisation requests'],
} as const satisfies Record<string, readonly [number, string]>;

export const ONLY_SUBSCRIPTIONS = 'only subscriptions over the WebSocket';

export interface ConnectionLimits {
  /** Messages received and not yet handled (contract: 32; one more closes with 1008). */
  maxPendingMessages: number;
  /** Bytes queued for a client that does not read; past it the connection closes with 4008. */
  maxBufferedBytes: number;
  /** Time a graphql-transport-ws client has to send connection_init (4408 after). */
  initTimeoutMs: number;
  /** SVC_RATE_SUBSCRIPTIONS_PER_CONNECTION, or null. */
  subscriptionsPerConnection: number | null;
}

/** What a connection needs from the server that accepted it. */
export interface ConnectionHost {
  readonly ctx: AppContext;
  readonly graphql: GraphqlExecutor;
  readonly fanout: Fanout;
  readonly limits: ConnectionLimits;
  /** Batches the writes of one turn of the event loop per socket. */
  readonly writes: WriteBatcher;
  /** Called once, when the connection is done (closed by either side). */
  released(conn: Connection): void;
  /** Called once, when the socket has closed. */
  socketClosed(ws: ServerSocket): void;
}

/**
 * The server's sockets (ws builds them from this class). ws closes a message over maxPayload
 * (whole or in fragments) with 1009 and no reason; the contract wants the reason too, and ws
 * calls close() for it, so close() names it. `connection` lets every socket share Connection's
 * listeners instead of holding closures of its own.
 */
export class ServerSocket extends WebSocket {
  connection: Connection | null = null;

  override close(code?: number, reason?: string | Buffer): void {
    super.close(
      code,
      code === CLOSE.messageTooLarge[0] && !reason ? CLOSE.messageTooLarge[1] : reason,
    );
  }
}

/**
 * One WebSocket connection: reads frames in order (one at a time, at most 32 waiting), runs
 * subscribe operations after re-checking the session, and writes results. Both subprotocols
 * share everything but the framing (./protocol.ts).
 */
export class Connection implements Expiring {
  readonly id = newId();
  readonly codec: Codec;
  /** Set by each keep-alive round; a socket that has not answered the last ping is terminated. */
  alive = true;
  /** Kept by the server's queue of session expiries. */
  expiryIndex = -1;
  private open = true;
  private initReceived = false;
  private readonly subs = new Map<string, Subscription>();
  /** Messages waiting to be handled; null while none wait (most of a connection's life). */
  private inbox: Array<{ data: RawData; binary: boolean }> | null = null;
  private unfinished = 0;
  private pumping = false;
  private initTimer: NodeJS.Timeout | undefined;
  private logger: Logger | undefined;

  constructor(
    readonly ws: ServerSocket,
    readonly session: SessionInfo,
    readonly client: ClientInfo,
    private readonly host: ConnectionHost,
  ) {
    this.codec = codecFor(ws.protocol as ProtocolName);
    ws.connection = this;
    ws.on('message', Connection.onMessage);
    ws.on('pong', Connection.onPong);
    ws.on('error', Connection.onError);
    ws.on('close', Connection.onClose);
    this.initTimer = setTimeout(Connection.initTimedOut, host.limits.initTimeoutMs, this);
    this.initTimer.unref();
  }

  // Listeners every socket shares: EventEmitter calls them with the socket as `this`.
  private static onMessage(this: WebSocket, data: RawData, binary: boolean): void {
    (this as ServerSocket).connection?.receive(data, binary);
  }

  private static onPong(this: WebSocket): void {
    const conn = (this as ServerSocket).connection;
    if (conn) conn.alive = true;
  }

  private static onError(this: WebSocket, err: Error): void {
    const conn = (this as ServerSocket).connection;
    conn?.debug('websocket error', { err: err.message });
    conn?.dispose();
  }

  private static onClose(this: WebSocket): void {
    const conn = (this as ServerSocket).connection;
    if (!conn) return;
    conn.host.socketClosed(conn.ws);
    conn.dispose();
  }

  private static initTimedOut(conn: Connection): void {
    conn.initTimer = undefined;
    if (!conn.initReceived) conn.close(CLOSE.initTimeout);
  }

  /**
   * The connection's logger, made on first use: most connections never log at the levels a
   * server runs with, and a pino child costs more than the rest of an idle connection.
   */
  get log(): Logger {
    return (this.logger ??= this.host.ctx.log.child({
      subsystem: 'ws',
      connection: this.id,
      protocol: this.codec.name,
    }));
  }

  /** Logs at debug level, making the logger only when debug lines are written. */
  debug(msg: string, fields?: Record<string, unknown>): void {
    if (!this.host.ctx.log.isLevelEnabled('debug')) return;
    if (fields) this.log.debug(fields, msg);
    else this.log.debug(msg);
  }

  get app(): AppContext {
    return this.host.ctx;
  }

  get accountId(): string {
    return this.session.accountId;
  }

  get expiresAt(): number {
    return this.session.expiresAt;
  }

  get isOpen(): boolean {
    return this.open;
  }

  /** Active subscriptions. */
  get subscriptionCount(): number {
    return this.subs.size;
  }

  // ---- Reading ----------------------------------------------------------------------------

  private receive(data: RawData, binary: boolean): void {
    if (!this.open) return;
    this.host.ctx.requestLoad.arrived();
    if (this.unfinished >= this.host.limits.maxPendingMessages) {
      this.close(CLOSE.tooManyMessages);
      return;
    }
    this.unfinished += 1;
    (this.inbox ??= []).push({ data, binary });
    if (!this.pumping) void this.pump();
  }

  /** Handles messages one at a time, in order; stays synchronous while handlers are. */
  private async pump(): Promise<void> {
    this.pumping = true;
    try {
      while (this.open && this.inbox) {
        const { data, binary } = this.inbox.shift()!;
        if (this.inbox.length === 0) this.inbox = null;
        try {
          const pending = this.handle(data, binary);
          if (pending) await pending;
        } catch (err) {
          this.log.error({ err }, 'websocket message failed');
          this.close(CLOSE.internal);
        } finally {
          this.unfinished -= 1;
        }
      }
    } finally {
      this.pumping = false;
    }
  }

  private handle(data: RawData, binary: boolean): Promise<void> | void {
    if (binary) {
      return this.invalid({
        kind: 'invalid',
        reason: 'binary frames are not accepted',
        reply: 'connection_error',
      });
    }
    const text = Buffer.isBuffer(data)
      ? data.toString('utf8')
      : Array.isArray(data)
        ? Buffer.concat(data).toString('utf8')
        : Buffer.from(data).toString('utf8');
    const command = this.codec.parse(text);
    switch (command.kind) {
      case 'invalid':
        return this.invalid(command);
      case 'init':
        return this.init();
      case 'ping':
        this.send(this.codec.pong(command.payload));
        return;
      case 'pong':
        return;
      case 'terminate':
        this.close(CLOSE.normal);
        return;
      case 'subscribe':
        return this.subscribe(command.id, command.payload);
      case 'stop':
        return this.stop(command.id);
    }
  }

  private get modern(): boolean {
    return this.codec.name === GRAPHQL_TRANSPORT_WS_PROTOCOL;
  }

  private invalid(command: Extract<ClientCommand, { kind: 'invalid' }>): void {
    this.debug('invalid websocket message', { reason: command.reason });
    if (this.modern) this.close(CLOSE.invalidMessage);
    else this.send(legacyProtocolError(command.reply, command.reason, command.id));
  }

  private init(): void {
    if (this.initReceived && this.modern) {
      this.close(CLOSE.tooManyInits);
      return;
    }
    // The legacy protocol's reference server acknowledges a repeated init again.
    this.initReceived = true;
    clearTimeout(this.initTimer);
    this.initTimer = undefined;
    this.send(this.codec.ack());
    if (!this.modern) this.send(LEGACY_KEEP_ALIVE);
  }

  private subscribe(id: string, payload: OperationPayload): Promise<void> | void {
    if (!this.initReceived) {
      if (this.modern) this.close(CLOSE.unauthorized);
      else this.send(legacyProtocolError('error', 'send connection_init first', id));
      return;
    }
    if (this.subs.has(id)) {
      if (this.modern) {
        this.close([4409, `Subscriber for ${id.slice(0, 80)} already exists`]);
        return;
      }
      // The legacy reference server replaces an operation started again under the same id.
      this.finish(id, false);
    }
    return this.startOperation(id, payload);
  }

  private stop(id: string): void {
    // graphql-transport-ws: the client's `complete` needs no answer. Legacy: `stop` is
    // confirmed with `complete`, as the reference server does.
    this.finish(id, !this.modern);
  }

  // ---- Operations -------------------------------------------------------------------------

  /**
   * The contract's order: the session first (4401 when it has ended), then the document, the
   * subscriptions-only rule, the per-connection limit, and only then the subscription itself.
   */
  private async startOperation(id: string, payload: OperationPayload): Promise<void> {
    const { ctx, graphql } = this.host;
    if (!(await this.sessionLive())) {
      this.endSession();
      return;
    }
    if (!this.open) return;
    const requestId = newId();
    const request: GraphqlRequest = payload;
    const prepared = graphql.prepare(payload.query);
    const kind = prepared.ok
      ? graphql.operationType(prepared.doc, payload.operationName)
      : operationKind(payload.query, payload.operationName);
    if (kind === 'query' || kind === 'mutation') {
      ctx.metrics.graphqlOperation(payload.operationName, 'invalid');
      this.answer(id, [codedError(validation(ONLY_SUBSCRIPTIONS), requestId)]);
      return;
    }
    if (!prepared.ok) {
      ctx.metrics.graphqlOperation(payload.operationName, 'invalid');
      const errors = GraphqlExecutor.preparationErrors(prepared.errors, requestId).errors ?? [];
      for (const m of this.codec.documentErrors(id, errors)) this.send(m);
      return;
    }
    const limit = this.host.limits.subscriptionsPerConnection;
    if (limit !== null && this.subs.size >= limit) {
      const err = new AppError(
        'TOO_MANY_SUBSCRIPTIONS',
        `a connection holds at most ${limit} subscriptions; end one first`,
        { limit },
      );
      this.answer(id, [codedError(err, requestId)]);
      return;
    }
    const context = this.graphqlContext(requestId);
    let source: unknown;
    try {
      source = await createSourceEventStream({
        schema: graphql.schema,
        document: prepared.doc.document,
        variableValues: request.variables ?? undefined,
        operationName: request.operationName ?? undefined,
        contextValue: context,
      });
    } catch (err) {
      source = {
        errors: [new GraphQLError('subscription failed', { originalError: err as Error })],
      };
    }
    if (!isAsyncIterable(source)) {
      const errors = (source as ExecutionResult).errors ?? [];
      ctx.metrics.graphqlOperation(payload.operationName, 'error');
      this.answer(
        id,
        errors.map((e) => formatError(e, requestId, context.log)),
      );
      return;
    }
    if (!this.open) {
      void disposeSource(source);
      return;
    }
    ctx.metrics.graphqlOperation(payload.operationName, 'ok');
    const sub = new Subscription(this, id, source, prepared.doc.document, payload, context);
    this.subs.set(id, sub);
    if (sub.legs.length > 0) {
      await Promise.all(sub.legs.map((leg) => this.host.fanout.add(leg)));
    } else {
      sub.iterate(graphql.schema);
    }
    // The place counts once the stream is live (for the in-process bus: at once).
    if (this.subs.get(id) === sub) {
      sub.counted = true;
      ctx.metrics.wsSubscriptions.inc();
    }
  }

  /** A coded error as the operation's one result, then `complete` (both protocols). */
  private answer(id: string, errors: GraphQLFormattedError[]): void {
    this.send(`${this.codec.resultPrefix(id)}${JSON.stringify({ errors })}}`);
    this.send(this.codec.complete(id));
  }

  /** Ends one subscription: stops its stream, frees its place, optionally tells the client. */
  finish(id: string, notify: boolean): void {
    const sub = this.subs.get(id);
    if (!sub) return;
    this.subs.delete(id);
    this.release(sub);
    if (notify) this.send(this.codec.complete(id));
  }

  private release(sub: Subscription): void {
    for (const leg of sub.legs) this.host.fanout.remove(leg);
    sub.stop();
    if (sub.counted) {
      sub.counted = false;
      this.host.ctx.metrics.wsSubscriptions.dec();
    }
  }

  // ---- Session ----------------------------------------------------------------------------

  private async sessionLive(): Promise<boolean> {
    if (this.host.ctx.clock.now().getTime() >= this.session.expiresAt) return false;
    const dead = await this.host.ctx.services.sessions.deadAmong([this.session.sessionId]);
    return dead.length === 0;
  }

  /** Ends every stream (each gets `complete`), then closes with 4401; nothing is sent after. */
  endSession(): void {
    if (!this.open) return;
    for (const id of [...this.subs.keys()]) this.finish(id, true);
    this.close(CLOSE.sessionEnded);
  }

  // ---- Writing and closing ----------------------------------------------------------------

  /** Writes one message unless closed; a client that has stopped reading is closed with 4008. */
  send(text: string): void {
    if (text === '' || !this.writable()) return;
    this.ws.send(text);
  }

  /**
   * Writes one text frame made elsewhere (frames.ts `textFrame`), straight to the socket, its
   * parts in order (a large body shared by every subscriber of a fan-out group is a part of its
   * own). Frames written this way and by `ws.send` keep their order: the server's `ws` has no
   * compression, so it too writes each frame to the socket at once.
   */
  sendFrame(parts: readonly Buffer[]): void {
    const socket = this.writable();
    if (!socket) return;
    for (const part of parts) socket.write(part);
  }

  /**
   * The socket, held for the batcher's next write (write-batcher.ts), while it takes messages;
   * null once closed or closing, and for a client that has stopped reading, closed with 4008.
   */
  private writable(): Duplex | null {
    if (!this.open || this.ws.readyState !== WebSocket.OPEN) return null;
    // The ws library keeps the underlying socket private; it is the net.Socket of the upgrade.
    const socket = (this.ws as unknown as { _socket?: Duplex })._socket;
    if (!socket) return null;
    if (this.ws.bufferedAmount > this.host.limits.maxBufferedBytes) {
      // Frames held for the batcher's write count as buffered: write them before judging.
      this.host.writes.release(socket);
      if (this.ws.bufferedAmount > this.host.limits.maxBufferedBytes) {
        this.log.info({ buffered: this.ws.bufferedAmount }, 'closing a slow consumer');
        this.close(CLOSE.slowConsumer);
        return null;
      }
    }
    this.host.writes.hold(socket);
    return socket;
  }

  /** One keep-alive round: terminate a socket that missed the last ping, ping the others. */
  heartbeat(): void {
    if (!this.open) return;
    if (!this.alive) {
      this.debug('terminating a socket that did not answer ping');
      this.dispose();
      this.ws.terminate();
      return;
    }
    this.alive = false;
    this.ws.ping();
    if (!this.modern && this.initReceived) this.send(LEGACY_KEEP_ALIVE);
  }

  close([code, reason]: readonly [number, string]): void {
    if (!this.open) return;
    this.dispose();
    this.ws.close(code, reason);
  }

  /** Frees everything the connection holds; runs once, whoever closed. */
  private dispose(): void {
    if (!this.open) return;
    this.open = false;
    clearTimeout(this.initTimer);
    this.initTimer = undefined;
    for (const sub of this.subs.values()) this.release(sub);
    this.subs.clear();
    this.inbox = null;
    this.host.released(this);
  }

  private graphqlContext(requestId: string): SocketRequestContext {
    return new SocketRequestContext(this, requestId);
  }
}

function isAsyncIterable(value: unknown): value is AsyncIterable<unknown> {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as AsyncIterable<unknown>)[Symbol.asyncIterator] === 'function'
  );
}

async function disposeSource(source: AsyncIterable<unknown>): Promise<void> {
  if (isLiveSource(source)) return;
  await source[Symbol.asyncIterator]().return?.();
}

/** The kind of operation a document selects, from its syntax alone (before validation). */
function operationKind(query: string, operationName: string | null): OperationTypeNode | null {
  const parsed = parseBounded(query);
  if ('error' in parsed) return null;
  return getOperationAST(parsed.document, operationName ?? undefined)?.operation ?? null;
}
