import { Redis } from 'ioredis';
import type { Logger } from 'pino';

import type { BusEvent, BusHandler, EventBus } from './bus.js';
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
}

/** Events held while Redis is away, per process; past this the oldest are dropped (logged). */
const MAX_HELD_EVENTS = 10_000;

interface TopicEntry {
  handlers: Set<BusHandler>;
  /** Settles once Redis has confirmed the SUBSCRIBE. */
  ready: Promise<void>;
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
 * - Pub/sub is at most once, so an outage is handled on both sides (docs/failures.md): a
 *   process that cannot reach Redis holds the events it publishes (up to MAX_HELD_EVENTS) and
 *   publishes them, in order, once its connection is back; a process whose subscriber
 *   connection dropped may have missed events of others, so when it is back (subscriptions
 *   renewed) it tells `onResync` listeners, which end the live subscriptions so that clients
 *   resubscribe and refetch.
 */
export class RedisBus implements EventBus {
  /** The publishing connection; also usable for ordinary commands (presence keys). */
  readonly commands: Redis;
  private readonly sub: Redis;
  private readonly topics = new Map<string, TopicEntry>();
  private readonly prefix: string;
  private closed = false;
  /** Events published while the command connection was down, oldest first. */
  private held: BusEvent[] = [];
  private readonly resyncListeners = new Set<() => void>();
  /** The subscriber connection was lost since it was last ready. */
  private subscriberLost = false;
  private readonly heartbeat: NodeJS.Timeout;

  private constructor(private readonly opts: RedisBusOptions) {
    this.prefix = opts.prefix;
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
    // one: publish() holds its event itself (and nothing else here must run twice).
    this.commands = new Redis(opts.url, {
      ...common,
      commandTimeout: timeoutMs,
      autoResendUnfulfilledCommands: false,
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
        .then(() => this.resync());
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
   * Publishes `event`; while Redis cannot be reached (or events are still held from an outage)
   * the event is held and published once the connection is back, and this resolves at once: a
   * request that committed is not made to wait for Redis.
   */
  async publish(event: BusEvent): Promise<void> {
    if (this.commands.status !== 'ready' || this.held.length > 0) {
      this.hold(event);
      return;
    }
    try {
      await this.commands.publish(this.prefix + event.topic, eventJson(event));
    } catch (err) {
      // Timed out on a stalled connection, or it broke mid-command: the outcome is unknown, so
      // the event is held and published again on a fresh connection (at least once).
      this.opts.log.warn({ err, topic: event.topic }, 'redis publish failed; holding the event');
      this.hold(event);
      if (!this.closed) this.commands.disconnect(true);
    }
  }

  /** Called after the subscriber connection came back: events may have been missed. */
  onResync(listener: () => void): () => void {
    this.resyncListeners.add(listener);
    return () => void this.resyncListeners.delete(listener);
  }

  private resync(): void {
    if (this.closed) return;
    this.opts.log.warn('redis subscriber connection is back; clients are told to resync');
    for (const listener of [...this.resyncListeners]) {
      try {
        listener();
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

  private hold(event: BusEvent): void {
    if (this.held.length === 0)
      this.opts.log.warn('redis is unreachable; holding published events until it is back');
    this.held.push(event);
    if (this.held.length > MAX_HELD_EVENTS) {
      this.held.shift();
      this.opts.log.error(
        { held: MAX_HELD_EVENTS },
        'redis unreachable for too long: dropped the oldest held event',
      );
    }
  }

  private publishHeld(): void {
    if (this.held.length === 0 || this.closed) return;
    const events = this.held;
    this.held = [];
    // One pipeline keeps their order; events published meanwhile wait behind it.
    const pipeline = this.commands.pipeline();
    for (const event of events) pipeline.publish(this.prefix + event.topic, eventJson(event));
    pipeline.exec().then(
      () => this.opts.log.info({ events: events.length }, 'published the held events'),
      (err: unknown) => {
        this.opts.log.warn({ err }, 'publishing the held events failed; holding them again');
        this.held = [...events, ...this.held];
      },
    );
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
    const entry = this.topics.get(channel.slice(this.prefix.length));
    if (!entry) return;
    let event: BusEvent;
    try {
      event = JSON.parse(message.toString('utf8')) as BusEvent;
    } catch (err) {
      this.opts.log.warn({ err, channel }, 'dropped an unreadable event from redis');
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
    await Promise.allSettled([quit(this.sub), quit(this.commands)]);
  }
}

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
