import type { Logger } from 'pino';
import { featureEnabled, type Config } from './config/index.js';
import type { Secrets } from './config/secrets.js';
import { openAppDatabase, type AppDatabaseOptions } from './app-database.js';
import { assertMigrated } from './db/migrate.js';
import { openEvents } from './events/wiring.js';
import { allJobs } from './jobs/index.js';
import { Scheduler } from './jobs/scheduler.js';
import { systemClock, type Clock } from './lib/clock.js';
import { TokenBucketLimiter } from './lib/token-bucket.js';
import { RequestLoad } from './lib/request-load.js';
import { Admission } from './http/admission.js';
import { createLogger } from './logger.js';
import { Metrics } from './metrics.js';
import { createMailer, type Mailer } from './mail/mailer.js';
import { SafeFetch, type SafeFetchOptions } from './net/safe-fetch.js';
import { readVersion } from './version.js';
import type { Services } from './services/index.js';
import { loadOrCreateServerKeys, signingKeyCreatedAt } from './services/instance/index.js';
import type { Federation } from './federation/index.js';
import { buildServices, type Infrastructure, type ServiceOverrides } from './build-services.js';
import { wireReactions } from './wiring.js';

/** Everything long-lived, created in one place and closed in reverse order. */
export interface AppContext extends Omit<Infrastructure, 'safeFetch'> {
  version: string;
  services: Services;
  /** Periodic jobs; started by the server, idle in the CLI (which runs jobs on demand). */
  scheduler: Scheduler;
  /** Per-process request limits (contract: Request limits), or null where off. */
  limiters: {
    /** SVC_RATE_REQUESTS_PER_MIN_PER_IP, counted by admission. */
    addresses: TokenBucketLimiter | null;
    /** SVC_RATE_MUTATIONS_PER_MIN_PER_SESSION, counted by the GraphQL route. */
    mutations: TokenBucketLimiter | null;
  };
  /** The one admission path of HTTP requests and WebSocket upgrades. */
  admission: Admission;
  /** Relay and host roles, the key log, peers and signed calls (docs/federation.md). */
  federation: Federation;
  featureEnabled(name: Parameters<typeof featureEnabled>[1]): boolean;
  close(): Promise<void>;
}

export interface ContextOverrides extends AppDatabaseOptions, ServiceOverrides {
  clock?: Clock;
  log?: Logger;
  /** Do not start the periodic jobs (tests run them with scheduler.runOnce). */
  noJobs?: boolean;
  /** Mail transport (tests capture mail); default from SVC_SMTP_*. */
  mailer?: Mailer;
  /** The outbox's drain interval, grace period and removal delay (tests); see events/outbox.ts. */
  outbox?: {
    drainIntervalMs?: number;
    graceMs?: number;
    keepRows?: boolean;
    removalDelayMs?: number;
  };
  /** Link-preview fetcher options (tests); the defaults are the contract's limits. */
  safeFetch?: SafeFetchOptions;
}

/**
 * The composition root, in four steps: open the infrastructure (database, keys, events,
 * metrics, mail), build the services (build-services.ts), register how areas react to each
 * other (wiring.ts), and start the background work. It does not migrate: `svc serve` and
 * `svc migrate` do (main.ts), and a database with pending migrations is refused here
 * (PendingMigrationsError) so no command runs on an old schema.
 */
export async function createAppContext(
  config: Config,
  secrets: Secrets,
  overrides: ContextOverrides = {},
): Promise<AppContext> {
  const log = overrides.log ?? createLogger(config.logLevel);
  const closers: Array<() => Promise<void> | void> = [];
  const close = async () => {
    for (const fn of closers.reverse()) {
      try {
        await fn();
      } catch (err) {
        log.error({ err }, 'error while closing');
      }
    }
  };
  try {
    const infra = await openInfrastructure(config, secrets, overrides, log, closers);
    const { services, messageRemover, pages, federation } = await buildServices(
      infra,
      overrides,
      closers,
    );
    wireReactions({ services, messageRemover, pages, outbox: infra.outbox, federation });
    const limiters = {
      addresses: perMinuteLimiter(config.rates.requestsPerMinPerIp),
      mutations: perMinuteLimiter(config.rates.mutationsPerMinPerSession),
    };
    const admission = new Admission(config, services.ipBlocks, limiters.addresses);
    const scheduler = await startBackground(infra, services, federation, overrides, closers);
    const { safeFetch: _fetcher, ...opened } = infra;
    return {
      ...opened,
      version: readVersion(),
      services,
      limiters,
      admission,
      federation,
      scheduler,
      featureEnabled: (name) => featureEnabled(config, name),
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}

/** The database (refused with pending migrations), the server keys, the events, metrics, mail. */
async function openInfrastructure(
  config: Config,
  secrets: Secrets,
  overrides: ContextOverrides,
  log: Logger,
  closers: Array<() => Promise<void> | void>,
): Promise<Infrastructure> {
  const clock = overrides.clock ?? systemClock;
  const db = openAppDatabase(config, secrets, log, overrides);
  closers.push(() => db.close());
  await assertMigrated(db);
  const keys = await loadOrCreateServerKeys(db, clock);
  if (!keys)
    throw new Error('the server keys are missing from the database; restore them from a backup');
  const keyCreatedAt = await signingKeyCreatedAt(db);
  const { bus, outbox } = await openEvents({
    db,
    log,
    redisUrl: secrets.redisUrl,
    config,
    passive: Boolean(overrides.passive),
    outbox: overrides.outbox,
    onClose: (fn) => closers.push(fn),
  });
  const metrics = new Metrics(db);
  closers.push(() => metrics.close());
  const mailer =
    overrides.mailer ??
    createMailer(config, secrets.smtpPassword, log.child({ subsystem: 'mail' }));
  closers.push(() => mailer.close());
  const requestLoad = new RequestLoad();
  const safeFetch = new SafeFetch(overrides.safeFetch);
  closers.push(() => safeFetch.close());
  return {
    config,
    log,
    clock,
    db,
    bus,
    outbox,
    keys,
    keyCreatedAt,
    metrics,
    mailer,
    requestLoad,
    safeFetch,
  };
}

/**
 * What the server runs in the background, unless `passive` (the command line): presence's idle
 * sweep and Redis heartbeat, the deny list's refresh (read once when passive), federation's
 * outbox, and the periodic jobs (not with `noJobs`).
 */
async function startBackground(
  infra: Infrastructure,
  services: Services,
  federation: Federation,
  overrides: ContextOverrides,
  closers: Array<() => Promise<void> | void>,
): Promise<Scheduler> {
  const { presence, ipBlocks } = services;
  if (!overrides.passive) presence.start();
  if (!overrides.passive) {
    await ipBlocks.start();
    closers.push(() => ipBlocks.stop());
  } else {
    await ipBlocks.refresh();
  }
  if (!overrides.passive) federation.start();
  // Index rows a stop lost (SQLite holds new messages' rows for a moment after their sends).
  if (!overrides.passive) await services.search.held.recover();
  const scheduler = new Scheduler(
    infra.db,
    infra.log.child({ subsystem: 'jobs' }),
    allJobs({ services, clock: infra.clock }),
  );
  closers.push(() => scheduler.stop());
  if (!overrides.passive && !overrides.noJobs) scheduler.start();
  return scheduler;
}

/** A per-minute bucket with a burst of the same size, or null when the limit is off. */
function perMinuteLimiter(perMinute: number | null): TokenBucketLimiter | null {
  return perMinute === null ? null : new TokenBucketLimiter({ perMinute, burst: perMinute });
}
