import type { Logger } from 'pino';

import { featureEnabled, type Config } from './config/index.js';
import { openDatabase, type Db } from './db/database.js';
import { migrateToLatest } from './db/migrate.js';
import type { EventBus } from './events/bus.js';
import { MemoryBus } from './events/memory-bus.js';
import { GraphqlExecutor } from './graphql/executor.js';
import { allJobs } from './jobs/index.js';
import { Scheduler } from './jobs/scheduler.js';
import { buildExecutableSchema, readSdl } from './graphql/load-schema.js';
import { allResolvers } from './graphql/resolvers/index.js';
import { systemClock, type Clock } from './lib/clock.js';
import { TokenBucketLimiter } from './lib/token-bucket.js';
import { createLogger } from './logger.js';
import { Metrics } from './metrics.js';
import { AccountService } from './services/accounts/account-service.js';
import { loadOrCreateServerKeys, type ServerKeys } from './services/instance/server-keys.js';
import { IpBlockService } from './services/ip-blocks/ip-block-service.js';
import { SessionService } from './services/sessions/session-service.js';
import { readVersion } from './version.js';

export interface Services {
  accounts: AccountService;
  sessions: SessionService;
  ipBlocks: IpBlockService;
}

/** Everything long-lived, created in one place and closed in reverse order. */
export interface AppContext {
  version: string;
  config: Config;
  log: Logger;
  clock: Clock;
  db: Db;
  bus: EventBus;
  keys: ServerKeys;
  keyCreatedAt: number;
  metrics: Metrics;
  graphql: GraphqlExecutor;
  services: Services;
  /** Periodic jobs; started by the server, idle in the CLI (which runs jobs on demand). */
  scheduler: Scheduler;
  limiters: {
    addresses: TokenBucketLimiter | null;
    mutations: TokenBucketLimiter | null;
  };
  featureEnabled(name: Parameters<typeof featureEnabled>[1]): boolean;
  close(): Promise<void>;
}

export interface ContextOverrides {
  clock?: Clock;
  log?: Logger;
  /** PostgreSQL schema to use (tests). */
  pgSchema?: string;
  /** Skip starting timers (deny-list refresh, jobs); for the CLI. */
  passive?: boolean;
  /** Do not start the periodic jobs (tests run them with scheduler.runOnce). */
  noJobs?: boolean;
}

/** Opens the database, runs migrations, loads keys and builds every service. */
export async function createAppContext(
  config: Config,
  overrides: ContextOverrides = {},
): Promise<AppContext> {
  const log = overrides.log ?? createLogger(config.logLevel);
  const clock = overrides.clock ?? systemClock;
  const db = openDatabase({
    url: config.database.url,
    dataDir: config.dataDir,
    poolSize: config.database.poolSize,
    schema: overrides.pgSchema,
  });
  const closers: Array<() => Promise<void> | void> = [() => db.close()];
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
    await migrateToLatest(db);
    const keys = await loadOrCreateServerKeys(db, clock);
    if (!keys)
      throw new Error('the server keys are missing from the database; restore them from a backup');
    const keyRow = await db.kysely
      .selectFrom('server_key')
      .select('createdAt')
      .where('kind', '=', 'signing')
      .executeTakeFirstOrThrow();

    const bus: EventBus = new MemoryBus((err, event) =>
      log.error({ err, topic: event.topic, type: event.type }, 'event handler failed'),
    );
    closers.push(() => bus.close());
    const metrics = new Metrics(db);
    closers.push(() => metrics.close());

    const sessions = new SessionService(db, clock, config.sessionTtlDays, keys.cookie);
    const accounts = new AccountService(db, config, clock, sessions);
    const ipBlocks = new IpBlockService(db, clock);
    if (!overrides.passive) {
      await ipBlocks.start();
      closers.push(() => ipBlocks.stop());
    } else {
      await ipBlocks.refresh();
    }

    const graphql = new GraphqlExecutor(buildExecutableSchema(readSdl(), allResolvers()));
    const perMin = config.rates.mutationsPerMinPerSession;

    const ctx: AppContext = {
      version: readVersion(),
      config,
      log,
      clock,
      db,
      bus,
      keys,
      keyCreatedAt: keyRow.createdAt,
      metrics,
      graphql,
      services: { accounts, sessions, ipBlocks },
      limiters: {
        addresses: null,
        mutations:
          perMin === null ? null : new TokenBucketLimiter({ perMinute: perMin, burst: perMin }),
      },
      scheduler: undefined as unknown as Scheduler,
      featureEnabled: (name) => featureEnabled(config, name),
      close,
    };
    ctx.scheduler = new Scheduler(db, log.child({ subsystem: 'jobs' }), allJobs(ctx));
    closers.push(() => ctx.scheduler.stop());
    if (!overrides.passive && !overrides.noJobs) ctx.scheduler.start();
    return ctx;
  } catch (err) {
    await close();
    throw err;
  }
}
