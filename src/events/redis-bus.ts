import { Redis } from 'ioredis';
import type { Logger } from 'pino';

import {
  RESYNC_TYPE,
  type BusEvent,
  type BusHandler,
  type EventBus,
  type ResyncListener,
} from './bus.js';
import { eventJson } from './event-json.js';

export interface RedisBusOptions {
  url: string;
  /** Prepended to every Redis channel and key, so several deployments (or tests) share a Redis. */
  prefix: string;
  log: Logger;
  onHandlerError?: (err: unknown, event: BusEvent) => void;
  /** How long boot waits for Redis before giving up. */
  connectTimeoutMs?: number;
  /** Each connection attempt and each command once running (SVC_REDIS_TIMEOUT_MS). */
  timeoutMs?: number;
  /** Most events held while Redis is away (default 10,000); past it a publish is refused. */
  maxHeld?: number;
}

/** Events held while Redis is away, per process; past this a publish is refused (logged). */
const MAX_HELD_EVENTS = 10_000;

interface TopicEntry {
  handlers: Set<BusHandler>;
  /** Settles once Redis has confirmed the SUBSCRIBE. */
  ready: Promise<void>;
}

/** One PUBLISH on its way out, and the promise `publish` returned for it. */
interface Outgoing {
  channel: string;
  message: string;
  /** Redis acknowledged it (a late reply after it was taken back: it is not sent again). */
  done: boolean;
  resolve(): void;
  reject(err: Error): void;
}

/**
 * The bus across processes: each topic is a Redis pub/sub channel `<prefix><topic>`.
 *
 * - One connection publishes (and runs the presence commands, see `commands`); one is in
 *   subscriber mode. A topic is subscribed in Redis while at least one local handler listens and
 *   released with the last one (counted, as Mastodon's streaming server does).
 * - A published event reaches local handlers only when Redis hands it back, never directly, so
 *   every process (this one included) sees the events of a channel once each, in the one order
 *   Redis delivered them. All events of a conversation travel on one topic, which keeps their
 *   order per conversation.
 * - `publish` never makes its caller wait for Redis: the PUBLISH is issued at the call (or held,
 *   below) and its promise settles when Redis acknowledges it. A broken or stalled connection is
 *   found by the PUBLISH that fails or times out, not by a request.
 * - Pub/sub is at most once, so an outage is handled on both sides (docs/failures.md): a
 *   process that cannot reach Redis holds the events it publishes (up to `maxHeld`) and
 *   publishes them, in order, once its connection is back, the unacknowledged ones of the
 *   broken connection first; a process whose subscriber connection dropped may have missed
 *   events of others, so when it is back (subscriptions renewed) it tells `onResync` listeners,
 *   which end the live subscriptions so that clients resubscribe and refetch.
 */
export class RedisBus implements EventBus {
  /** The publishing connection; also usable for ordinary commands (presence keys). */
  readonly commands: Redis;
  private readonly sub: Redis;
  private readonly topics = new Map<string, TopicEntry>();
  private readonly prefix: string;
  private readonly maxHeld: number;
  private closed = false;
  /** Issued on the command connection and not yet acknowledged, oldest first. */
  private readonly sent = new Set<Outgoing>();
  /** Not issued: the connection was down (or events were still held), oldest first. */
  private held: Outgoing[] = [];
  /** Bumped when the command connection is given up: failures of older PUBLISHes are stale. */
  private generation = 0;
  /** A refused publish was logged during this outage. */
  private refusalLogged = false;
  private readonly resyncListeners = new Set<ResyncListener>();
  /** The subscriber connection was lost since it was last ready. */
  private subscriberLost = false;
  private readonly heartbeat: NodeJS.Timeout;

  private constructor(private readonly opts: RedisBusOptions) {
    this.prefix = opts.prefix;
    this.maxHeld = opts.maxHeld ?? MAX_HELD_EVENTS;
    const timeoutMs = opts.timeoutMs ?? 2000;
    const common = {
      lazyConnect: true,
      maxRetriesPerRequest: null,
      connectionName: 'svc',
      connectTimeout: timeoutMs,
      // TCP keep-alive finds a silently dead path to Redis on an idle connection.
      keepAlive: 10_000,
      // Reconnect quickly at first, then every two seconds at most, for as long as it takes.
      retryStrategy: (times: number) => Math.min(times * 100, 2000),
    };
    // A command cut off by a broken connection fails rather than being sent again on the next
    // one, and a command issued while it is down fails at once rather than waiting in ioredis's
    // offline queue (which would send it after reconnecting, ahead of what publish() holds):
    // publish() issues its events again itself, in order, and nothing else here must run twice
    // or wait for Redis.
    this.commands = new Redis(opts.url, {
      ...common,
      commandTimeout: timeoutMs,
      autoResendUnfulfilledCommands: false,
      enableOfflineQueue: false,
    });
    this.sub = new Redis(opts.url, { ...common, autoResubscribe: true });
    const log = opts.log;
    for (const [name, client] of [
      ['commands', this.commands],
      ['subscriber', this.sub],
    ] as const) {
      client.on('error', (err: Error) => {
        if (!this.closed)
          log.warn({ err: err.message, connection: name }, 'redis connection error');
      });
    }
    this.commands.on('ready', () => this.publishHeld());
    this.sub.on('close', () => {
      if (!this.closed) this.subscriberLost = true;
    });
    this.sub.on('ready', () => {
      if (!this.subscriberLost || this.closed) return;
      this.subscriberLost = false;
      // ioredis renews the subscriptions right after 'ready'; a PING answered after them
      // means they are live again before clients are sent to resubscribe.
      void this.sub
        .ping()
        .catch(() => undefined)
        .then(() => this.resync(null));
    });
    // A stalled path never closes the subscriber connection on its own: a PING that gets no
    // answer in time renews it (and then clients are told to resync).
    this.heartbeat = setInterval(() => void this.checkSubscriber(timeoutMs), timeoutMs);
    this.heartbeat.unref();
    this.sub.on('messageBuffer', (channel: Buffer, message: Buffer) =>
      this.onMessage(channel.toString('utf8'), message),
    );
  }

  /** Connects both connections; rejects when Redis cannot be reached in time. */
  static async connect(opts: RedisBusOptions): Promise<RedisBus> {
    const bus = new RedisBus(opts);
    const timeoutMs = opts.connectTimeoutMs ?? 10_000;
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        Promise.all([bus.commands.connect(), bus.sub.connect()]),
        new Promise((_, reject) => {
          timer = setTimeout(
            () => reject(new Error(`could not reach Redis (SVC_REDIS_URL) in ${timeoutMs} ms`)),
            timeoutMs,
          );
        }),
      ]);
    } catch (err) {
      await bus.close();
      throw err;
    } finally {
      clearTimeout(timer);
    }
    return bus;
  }

  /**
   * Issues a PUBLISH of `event` now, or holds it while Redis cannot be reached (or events are
   * still held from an outage); resolves once Redis has acknowledged it (see EventBus).
   */
  publish(event: BusEvent): Promise<void> {
    return this.issue(event.topic, eventJson(event));
  }

  publishResync(topics: readonly string[]): Promise<void> {
    const at = Date.now();
    return Promise.all(
      topics.map((topic) => this.issue(topic, JSON.stringify({ topic, type: RESYNC_TYPE, at }))),
    ).then(() => undefined);
  }

  reachable(): boolean {
    return !this.closed && this.commands.status === 'ready' && this.held.length === 0;
  }

  /** Events held (not yet issued) and issued but not yet acknowledged; for tests and logs. */
  backlog(): { held: number; unacknowledged: number } {
    return { held: this.held.length, unacknowledged: this.sent.size };
  }

  private issue(topic: string, message: string): Promise<void> {
    let outgoing!: Outgoing;
    const promise = new Promise<void>((resolve, reject) => {
      outgoing = { channel: this.prefix + topic, message, done: false, resolve, reject };
    });
    // A caller that does not wait for the outcome must not leave an unhandled rejection.
    promise.catch(() => undefined);
    if (this.closed) outgoing.reject(busClosed());
    else if (this.commands.status === 'ready' && this.held.length === 0) this.send(outgoing);
    else this.hold(outgoing);
    return promise;
  }

  private send(outgoing: Outgoing): void {
    const generation = this.generation;
    this.sent.add(outgoing);
    this.commands.publish(outgoing.channel, outgoing.message).then(
      () => {
        outgoing.done = true;
        this.sent.delete(outgoing);
        outgoing.resolve();
      },
      (err: unknown) => {
        if (generation === this.generation) this.commandConnectionFailed(err);
      },
    );
  }

  /**
   * A PUBLISH failed: timed out on a stalled connection, or the connection broke under it. Its
   * outcome and that of every PUBLISH issued after it are unknown, so they are all held again,
   * in order, ahead of what was held meanwhile, and published again on a fresh connection (at
   * least once).
   */
  private commandConnectionFailed(err: unknown): void {
    this.generation += 1;
    const unacknowledged = [...this.sent].filter((o) => !o.done);
    this.sent.clear();
    if (this.closed) {
      for (const outgoing of unacknowledged) outgoing.reject(busClosed());
      return;
    }
    this.held = [...unacknowledged, ...this.held];
    this.opts.log.warn(
      { err, events: this.held.length },
      'redis publish failed; holding the events until the connection is back',
    );
    // Still 'ready' means the path stalled without the connection noticing: renew it.
    if (this.commands.status === 'ready') this.commands.disconnect(true);
  }

  /** Called when subscribers must resync (the subscriber connection came back, or a drainer). */
  onResync(listener: ResyncListener): () => void {
    this.resyncListeners.add(listener);
    return () => void this.resyncListeners.delete(listener);
  }

  private resync(topics: readonly string[] | null): void {
    if (this.closed) return;
    if (topics === null)
      this.opts.log.warn('redis subscriber connection is back; clients are told to resync');
    for (const listener of [...this.resyncListeners]) {
      try {
        listener(topics);
      } catch (err) {
        this.opts.log.error({ err }, 'resync listener failed');
      }
    }
  }

  private async checkSubscriber(timeoutMs: number): Promise<void> {
    if (this.closed || this.sub.status !== 'ready') return;
    let timer: NodeJS.Timeout | undefined;
    const answered = await Promise.race([
      this.sub.ping().then(
        () => true,
        () => false,
      ),
      new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(false), timeoutMs);
      }),
    ]);
    clearTimeout(timer);
    if (!answered && !this.closed && this.sub.status === 'ready') {
      this.opts.log.warn('redis subscriber connection does not answer; reconnecting');
      this.sub.disconnect(true);
    }
  }

  private hold(outgoing: Outgoing): void {
    if (this.held.length === 0) {
      this.refusalLogged = false;
      this.opts.log.warn('redis is unreachable; holding published events until it is back');
    }
    if (this.held.length >= this.maxHeld) {
      // The held ones keep their places; this one is refused (an outbox event keeps its row,
      // which a drainer publishes later).
      if (!this.refusalLogged) {
        this.refusalLogged = true;
        this.opts.log.error(
          { held: this.held.length },
          'redis unreachable for too long: refusing to hold more events',
        );
      }
      outgoing.reject(new Error(`${this.held.length} events already held for Redis`));
      return;
    }
    this.held.push(outgoing);
  }

  /** The command connection is (back) up: what was held goes out first, in order. */
  private publishHeld(): void {
    if (this.held.length === 0 || this.closed) return;
    const held = this.held;
    this.held = [];
    let published = 0;
    for (const outgoing of held) {
      if (outgoing.done) continue;
      published += 1;
      this.send(outgoing);
    }
    this.opts.log.info({ events: published }, 'publishing the held events');
  }

  subscribe(topic: string, handler: BusHandler): () => void {
    let entry = this.topics.get(topic);
    if (!entry) {
      const ready = this.sub.subscribe(this.prefix + topic).then(
        () => undefined,
        (err: unknown) => {
          this.opts.log.error({ err, topic }, 'redis subscribe failed');
        },
      );
      entry = { handlers: new Set(), ready };
      this.topics.set(topic, entry);
    }
    entry.handlers.add(handler);
    return () => {
      const current = this.topics.get(topic);
      if (!current || !current.handlers.delete(handler)) return;
      if (current.handlers.size > 0) return;
      this.topics.delete(topic);
      if (!this.closed) {
        this.sub.unsubscribe(this.prefix + topic).catch((err: unknown) => {
          this.opts.log.warn({ err, topic }, 'redis unsubscribe failed');
        });
      }
    };
  }

  /** Resolves once Redis has confirmed the subscription of `topic` (now, when not subscribed). */
  whenSubscribed(topic: string): Promise<void> {
    return this.topics.get(topic)?.ready ?? Promise.resolve();
  }

  /** Number of topics subscribed in Redis (released with the last local listener). */
  topicCount(): number {
    return this.topics.size;
  }

  private onMessage(channel: string, message: Buffer): void {
    if (!channel.startsWith(this.prefix)) return;
    const topic = channel.slice(this.prefix.length);
    const entry = this.topics.get(topic);
    if (!entry) return;
    let event: BusEvent;
    try {
      event = JSON.parse(message.toString('utf8')) as BusEvent;
    } catch (err) {
      this.opts.log.warn({ err, channel }, 'dropped an unreadable event from redis');
      return;
    }
    if (event.type === RESYNC_TYPE) {
      this.resync([topic]);
      return;
    }
    for (const handler of [...entry.handlers]) {
      try {
        handler(event);
      } catch (err) {
        this.opts.onHandlerError?.(err, event);
      }
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.heartbeat);
    this.topics.clear();
    this.resyncListeners.clear();
    for (const outgoing of this.held) outgoing.reject(busClosed());
    this.held = [];
    // QUIT is answered after the PUBLISHes before it: what is still unacknowledged then is lost.
    await Promise.allSettled([quit(this.sub), quit(this.commands)]);
    for (const outgoing of this.sent) outgoing.reject(busClosed());
    this.sent.clear();
  }
}

const busClosed = () => new Error('the event bus closed before the event was published');

async function quit(client: Redis): Promise<void> {
  if (client.status === 'end' || client.status === 'wait') {
    client.disconnect();
    return;
  }
  try {
    await client.quit();
  } catch {
    client.disconnect();
  }
}

/** Resolves once `topic` is live on `bus` (at once for the in-process bus). */
export function whenSubscribed(bus: EventBus, topic: string): Promise<void> {
  return bus instanceof RedisBus ? bus.whenSubscribed(topic) : Promise.resolve();
}
