import { execute, type DocumentNode } from 'graphql';
import type { Logger } from 'pino';

import type { AppContext } from '../context.js';
import type { GraphqlContext } from '../graphql/context.js';
import type { GraphqlExecutor } from '../graphql/executor.js';
import { formatError } from '../graphql/format-error.js';
import type { SessionInfo } from '../auth/session.js';

import type { Delivery } from './fanout.js';
import { textFrame, type EncodedResult } from './frames.js';
import { isLiveSource, type LiveStream } from '../events/live-stream.js';
import type { OperationPayload } from './protocol.js';

/** Who is at the other end of a connection, as read at the upgrade. */
export interface ClientInfo {
  ip: string;
  userAgent: string | null;
  /** The raw `svc_session` cookie value. */
  token: string;
}

/** What a subscription and its context need from their connection. */
export interface SubscriptionOwner {
  readonly app: AppContext;
  readonly session: SessionInfo;
  readonly client: ClientInfo;
  readonly codec: { resultPrefix(id: string): string };
  /** The connection's logger (made on first use). */
  readonly log: Logger;
  send(text: string): void;
  /** Writes one text frame's parts (frames.ts `textFrame`), in order, as they are. */
  sendFrame(parts: readonly Buffer[]): void;
  finish(id: string, notify: boolean): void;
}

const noCookies: GraphqlContext['cookies'] = { startSession() {}, clearSession() {} };

/**
 * The GraphQL context of one operation on a connection. A subscription keeps it for as long as
 * it lives, so it holds only what is its own and reads the rest from the connection; its logger
 * (the connection's, with `request_id`) is made only when something logs: an idle subscriber
 * never does.
 */
export class SocketRequestContext implements GraphqlContext {
  actor: GraphqlContext['actor'] = undefined;
  sessionAccount: GraphqlContext['sessionAccount'] = undefined;
  loaders: GraphqlContext['loaders'] = undefined;
  private logger: Logger | undefined = undefined;

  constructor(
    private readonly owner: SubscriptionOwner,
    readonly requestId: string,
  ) {}

  get services(): GraphqlContext['services'] {
    return this.owner.app.services;
  }
  get clock(): GraphqlContext['clock'] {
    return this.owner.app.clock;
  }
  get federation(): GraphqlContext['federation'] {
    return this.owner.app.federation;
  }
  get config(): GraphqlContext['config'] {
    return this.owner.app.config;
  }
  get version(): string {
    return this.owner.app.version;
  }
  get session(): SessionInfo {
    return this.owner.session;
  }
  get sessionToken(): string {
    return this.owner.client.token;
  }
  get ip(): string {
    return this.owner.client.ip;
  }
  get userAgent(): string | null {
    return this.owner.client.userAgent;
  }
  get cookies(): GraphqlContext['cookies'] {
    return noCookies;
  }
  get transport(): 'ws' {
    return 'ws';
  }
  get log(): Logger {
    return (this.logger ??= this.owner.log.child({ request_id: this.requestId }));
  }
}

/** One active subscription on a connection. */
export class Subscription {
  counted = false;
  /** One per topic when the root returned a LiveSource; none for a plain async iterable. */
  readonly legs: Leg[];
  readonly variables: Record<string, unknown> | null;
  readonly operationName: string | null;
  private readonly prefix: string;
  /** `prefix` encoded, made at the first delivery (an idle subscriber never needs it). */
  private prefixBytes: Buffer | null = null;
  /** The source to iterate; dropped for a LiveSource, which the fan-out feeds through the legs. */
  private readonly source: AsyncIterable<unknown> | null;
  private iterator: AsyncIterator<unknown> | null = null;

  constructor(
    private readonly conn: SubscriptionOwner,
    readonly id: string,
    source: AsyncIterable<unknown>,
    readonly document: DocumentNode,
    payload: OperationPayload,
    readonly context: GraphqlContext,
  ) {
    this.variables = payload.variables;
    this.operationName = payload.operationName;
    this.prefix = conn.codec.resultPrefix(id);
    if (isLiveSource(source)) {
      const groupKey = `${payload.operationName ?? ''}\u0000${stableJson(payload.variables)}\u0000${payload.query}`;
      this.legs = source.streams.map((stream) => new Leg(this, stream, groupKey));
      this.source = null;
    } else {
      this.legs = [];
      this.source = source;
    }
  }

  send(resultJson: string): void {
    this.conn.send(`${this.prefix}${resultJson}}`);
  }

  /** A fan-out delivery: the group's bytes, behind this subscription's own envelope. */
  sendEncoded(result: EncodedResult): void {
    this.conn.sendFrame(textFrame((this.prefixBytes ??= Buffer.from(this.prefix)), result.body()));
  }

  end(): void {
    this.conn.finish(this.id, true);
  }

  /** For a subscription root that returns a plain async iterable: executes per value. */
  iterate(schema: GraphqlExecutor['schema']): void {
    if (!this.source) return;
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
    public groupKey: string,
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
  send(result: EncodedResult): void {
    this.sub.sendEncoded(result);
  }
  end(): void {
    this.sub.end();
  }
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
