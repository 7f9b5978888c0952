import {
  createSourceEventStream,
  execute,
  getOperationAST,
  GraphQLError,
  type DocumentNode,
  type ExecutionResult,
  type GraphQLFormattedError,
  type OperationTypeNode,
} from 'graphql';
import type { Duplex } from 'node:stream';

import type { Logger } from 'pino';
import { WebSocket, type RawData } from 'ws';

import type { AppContext } from '../context.js';
import { AppError, validation } from '../errors.js';
import type { GraphqlContext } from '../graphql/context.js';
import { parseBounded } from '../graphql/document-limits.js';
import { GraphqlExecutor, type GraphqlRequest } from '../graphql/executor.js';
import { codedError, formatError } from '../graphql/format-error.js';
import { newId } from '../lib/ids.js';
import type { SessionInfo } from '../services/sessions/session-service.js';

import type { Delivery, Fanout } from './fanout.js';
import { isLiveSource, type LiveStream } from '../events/live-stream.js';
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
}

const noCookies: GraphqlContext['cookies'] = { startSession() {}, clearSession() {} };

/**
 * One WebSocket connection: reads frames in order (one at a time, at most 32 waiting), runs
 * subscribe operations after re-checking the session, and writes results. Both subprotocols
 * share everything but the framing (./protocol.ts).
 */
export class Connection {
  readonly id = newId();
  readonly codec: Codec;
  readonly log: Logger;
  /** Set by each keep-alive round; a socket that has not answered the last ping is terminated. */
  alive = true;
  private open = true;
  private initReceived = false;
  private readonly subs = new Map<string, Subscription>();
  private readonly inbox: Array<{ data: RawData; binary: boolean }> = [];
  private unfinished = 0;
  private pumping = false;
  private initTimer: NodeJS.Timeout | undefined;
  private expiryTimer: NodeJS.Timeout | undefined;

  constructor(
    readonly ws: WebSocket,
    readonly session: SessionInfo,
    private readonly client: { ip: string; userAgent: string | null; token: string },
    private readonly host: ConnectionHost,
  ) {
    this.codec = codecFor(ws.protocol as ProtocolName);
    this.log = host.ctx.log.child({
      subsystem: 'ws',
      connection: this.id,
      protocol: this.codec.name,
    });
    // ws closes a message over maxPayload (whole or in fragments) with 1009 and no reason; the
    // contract wants the reason too. ws calls the instance's close() for it, so name it there.
    const close = ws.close.bind(ws);
    ws.close = ((code?: number, reason?: string | Buffer) =>
      close(
        code,
        code === CLOSE.messageTooLarge[0] && !reason ? CLOSE.messageTooLarge[1] : reason,
      )) as WebSocket['close'];
    ws.on('message', (data, binary) => this.receive(data, binary));
    ws.on('pong', () => {
      this.alive = true;
    });
    ws.on('error', (err) => {
      this.log.debug({ err: err.message }, 'websocket error');
      this.dispose();
    });
    ws.on('close', () => this.dispose());
    this.initTimer = setTimeout(() => {
      if (!this.initReceived) this.close(CLOSE.initTimeout);
    }, host.limits.initTimeoutMs);
    this.initTimer.unref();
    this.scheduleExpiry();
  }

  get accountId(): string {
    return this.session.accountId;
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
    this.inbox.push({ data, binary });
    if (!this.pumping) void this.pump();
  }

  /** Handles messages one at a time, in order; stays synchronous while handlers are. */
  private async pump(): Promise<void> {
    this.pumping = true;
    try {
      while (this.open && this.inbox.length > 0) {
        const { data, binary } = this.inbox.shift()!;
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
    this.log.debug({ reason: command.reason }, 'invalid websocket message');
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

  private scheduleExpiry(): void {
    const left = this.session.expiresAt - this.host.ctx.clock.now().getTime();
    if (left <= 0) {
      // Expired while connecting: close once the handshake has finished.
      setImmediate(() => this.endSession());
      return;
    }
    this.expiryTimer = setTimeout(() => this.scheduleExpiry(), Math.min(left, 2_147_483_647));
    this.expiryTimer.unref();
  }

  // ---- Writing and closing ----------------------------------------------------------------

  /** Writes one message unless closed; a client that has stopped reading is closed with 4008. */
  send(text: string): void {
    if (!this.open || text === '' || this.ws.readyState !== WebSocket.OPEN) return;
    if (this.ws.bufferedAmount > this.host.limits.maxBufferedBytes) {
      this.log.info({ buffered: this.ws.bufferedAmount }, 'closing a slow consumer');
      this.close(CLOSE.slowConsumer);
      return;
    }
    // The ws library keeps the underlying socket private; it is the net.Socket of the upgrade.
    this.host.writes.hold((this.ws as unknown as { _socket?: Duplex })._socket);
    this.ws.send(text);
  }

  /** One keep-alive round: terminate a socket that missed the last ping, ping the others. */
  heartbeat(): void {
    if (!this.open) return;
    if (!this.alive) {
      this.log.debug('terminating a socket that did not answer ping');
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
    clearTimeout(this.expiryTimer);
    for (const sub of this.subs.values()) this.release(sub);
    this.subs.clear();
    this.inbox.length = 0;
    this.host.released(this);
  }

  private graphqlContext(requestId: string): GraphqlContext {
    return {
      app: this.host.ctx,
      requestId,
      session: this.session,
      sessionToken: this.client.token,
      ip: this.client.ip,
      userAgent: this.client.userAgent,
      log: this.log.child({ request_id: requestId }),
      cookies: noCookies,
      transport: 'ws',
    };
  }
}

/** One active subscription on a connection. */
class Subscription {
  counted = false;
  /** One per topic when the root returned a LiveSource; none for a plain async iterable. */
  readonly legs: Leg[];
  readonly variables: Record<string, unknown> | null;
  readonly operationName: string | null;
  private readonly prefix: string;
  private iterator: AsyncIterator<unknown> | null = null;

  constructor(
    private readonly conn: Connection,
    readonly id: string,
    private readonly source: AsyncIterable<unknown>,
    readonly document: DocumentNode,
    payload: OperationPayload,
    readonly context: GraphqlContext,
  ) {
    this.variables = payload.variables;
    this.operationName = payload.operationName;
    this.prefix = conn.codec.resultPrefix(id);
    const groupKey = `${payload.operationName ?? ''}\u0000${stableJson(payload.variables)}\u0000${payload.query}`;
    this.legs = isLiveSource(source)
      ? source.streams.map((stream) => new Leg(this, stream, groupKey))
      : [];
  }

  send(resultJson: string): void {
    this.conn.send(`${this.prefix}${resultJson}}`);
  }

  end(): void {
    this.conn.finish(this.id, true);
  }

  /** For a subscription root that returns a plain async iterable: executes per value. */
  iterate(schema: GraphqlExecutor['schema']): void {
    const iterator = this.source[Symbol.asyncIterator]();
    this.iterator = iterator;
    void (async () => {
      try {
        for (;;) {
          const step = await iterator.next();
          if (step.done || this.iterator === null) break;
          const result = await execute({
            schema,
            document: this.document,
            rootValue: step.value,
            contextValue: this.context,
            variableValues: this.variables ?? undefined,
            operationName: this.operationName ?? undefined,
          });
          const out: Record<string, unknown> = {};
          if (result.errors?.length) {
            out.errors = result.errors.map((e) =>
              formatError(e, this.context.requestId, this.context.log),
            );
          }
          out.data = result.data ?? null;
          this.send(JSON.stringify(out));
        }
        if (this.iterator !== null) this.end();
      } catch (err) {
        this.context.log.error({ err }, 'subscription source failed');
        if (this.iterator !== null) this.end();
      }
    })();
  }

  stop(): void {
    const iterator = this.iterator;
    this.iterator = null;
    void iterator?.return?.();
  }
}

/** A subscription's stream on one topic, as the fan-out sees it. */
class Leg implements Delivery {
  constructor(
    private readonly sub: Subscription,
    readonly stream: LiveStream,
    readonly groupKey: string,
  ) {}

  get document(): DocumentNode {
    return this.sub.document;
  }
  get variables(): Record<string, unknown> | null {
    return this.sub.variables;
  }
  get operationName(): string | null {
    return this.sub.operationName;
  }
  get context(): GraphqlContext {
    return this.sub.context;
  }
  send(resultJson: string): void {
    this.sub.send(resultJson);
  }
  end(): void {
    this.sub.end();
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

/** JSON with object keys sorted, so equal variables give equal group keys. */
function stableJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value ?? null);
  if (Array.isArray(value)) return `[${value.map(stableJson).join(',')}]`;
  const keys = Object.keys(value as Record<string, unknown>).sort();
  return `{${keys
    .map((k) => `${JSON.stringify(k)}:${stableJson((value as Record<string, unknown>)[k])}`)
    .join(',')}}`;
}
