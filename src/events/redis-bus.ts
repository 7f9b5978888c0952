import { Redis } from 'ioredis';
import type { Logger } from 'pino';

import type { BusEvent, BusHandler, EventBus } from './bus.js';

export interface RedisBusOptions {
  url: string;
  /** Prepended to every Redis channel and key, so several deployments (or tests) share a Redis. */
  prefix: string;
  log: Logger;
  onHandlerError?: (err: unknown, event: BusEvent) => void;
  /** How long boot waits for Redis before giving up. */
  connectTimeoutMs?: number;
}

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
 * - Pub/sub is at most once: an event published while a process is disconnected from Redis is
 *   not replayed to it (clients refetch after reconnecting, as they do after a restart).
 */
export class RedisBus implements EventBus {
  /** The publishing connection; also usable for ordinary commands (presence keys). */
  readonly commands: Redis;
  private readonly sub: Redis;
  private readonly topics = new Map<string, TopicEntry>();
  private readonly prefix: string;
  private closed = false;

  private constructor(private readonly opts: RedisBusOptions) {
    this.prefix = opts.prefix;
    const common = {
      lazyConnect: true,
      maxRetriesPerRequest: null,
      connectionName: 'svc',
      retryStrategy: (times: number) => Math.min(times * 200, 5000),
    };
    this.commands = new Redis(opts.url, common);
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

  async publish(event: BusEvent): Promise<void> {
    await this.commands.publish(this.prefix + event.topic, JSON.stringify(event));
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
