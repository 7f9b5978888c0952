import type { Logger } from 'pino';

import type { Config } from '../config/index.js';
import type { Db } from '../db/database.js';

import type { BusEvent, EventBus } from './bus.js';
import { MemoryBus } from './memory-bus.js';
import { Outbox, type OutboxOptions } from './outbox.js';
import { RedisBus } from './redis-bus.js';

/**
 * The event bus and its outbox, as the composition root opens them. With SVC_REDIS_URL events
 * reach every process (the command line's too) through Redis pub/sub; otherwise the in-process
 * bus. Events go through the outbox (docs/events.md, "Delivery"): the command line without Redis
 * reaches no listener, so it leaves its events to the servers' drainer; a server on the
 * in-process bus holds every listener itself and writes no rows.
 */
export async function openEvents(opts: {
  db: Db;
  log: Logger;
  redisUrl: string | null;
  config: Pick<Config, 'redisPrefix' | 'redisTimeoutMs' | 'outboxGraceMs'>;
  /** The command line: it publishes but listens to nothing, and runs no drainer. */
  passive: boolean;
  outbox?: Partial<
    Pick<OutboxOptions, 'drainIntervalMs' | 'graceMs' | 'keepRows' | 'removalDelayMs'>
  >;
  onClose(fn: () => Promise<void>): void;
}): Promise<{ bus: EventBus; outbox: Outbox }> {
  const { db, log, config, passive } = opts;
  const onHandlerError = (err: unknown, event: BusEvent) =>
    log.error({ err, topic: event.topic, type: event.type }, 'event handler failed');
  const bus: EventBus = opts.redisUrl
    ? await RedisBus.connect({
        url: opts.redisUrl,
        prefix: config.redisPrefix,
        timeoutMs: config.redisTimeoutMs,
        log: log.child({ subsystem: 'bus' }),
        onHandlerError,
      })
    : new MemoryBus(onHandlerError);
  opts.onClose(() => bus.close());
  const outbox = new Outbox({
    db,
    bus,
    log: log.child({ subsystem: 'outbox' }),
    reachesListeners: !passive || bus instanceof RedisBus,
    keepRows: passive || bus instanceof RedisBus,
    graceMs: config.outboxGraceMs,
    ...opts.outbox,
  });
  opts.onClose(() => outbox.close());
  if (!passive) outbox.start();
  return { bus, outbox };
}
