import type http from 'node:http';

import type { FastifyInstance } from 'fastify';

import type { Config } from './config/index.js';
import type { Secrets } from './config/secrets.js';
import { openAppDatabase } from './app-database.js';
import { createAppContext, type AppContext, type ContextOverrides } from './context.js';
import { autovacuumOff } from './db/postgres/autovacuum.js';
import { MIGRATION_STATEMENT_MS, migrateToLatest, newerReleaseMigrations } from './db/migrate.js';
import { buildGraphqlExecutor } from './graphql/build.js';
import { buildHttpApp, type HttpAppOptions } from './http/app.js';
import { createLogger } from './logger.js';
import { startMetricsListener } from './http/metrics-listener.js';
import { attachRealtime, type RealtimeOptions, type RealtimeServer } from './ws/server.js';

export interface RunningServer {
  ctx: AppContext;
  app: FastifyInstance;
  /** The API's address once listening (port 0 picks a free one). */
  address: { host: string; port: number };
  metricsAddress: { host: string; port: number } | null;
  /** GET /api/ws: the WebSocket connections of this process. */
  realtime: RealtimeServer;
  /** Stops accepting, finishes in-flight requests, closes sockets, then the database. */
  stop(): Promise<void>;
}

/**
 * Logs the boot line the contract fixes for feature states. `disabled` and `unavailable` are
 * string fields (the contract's wording): names comma-separated in the fixed feature order, the
 * same syntax as SVC_FEATURES_DISABLED; an unavailable entry carries its reason in parentheses.
 * Empty string when nothing is in that state.
 */
export function logFeatureStates(ctx: AppContext): void {
  ctx.log.info(
    {
      disabled: ctx.config.features
        .filter((f) => f.state === 'disabled')
        .map((f) => f.key)
        .join(','),
      unavailable: ctx.config.features
        .filter((f) => f.state === 'unavailable')
        .map((f) => `${f.key} (${f.reason})`)
        .join(','),
    },
    'instance features (SVC_FEATURES_DISABLED)',
  );
}

/**
 * Mail goes out (`email` enabled) but SVC_PUBLIC_BASE_URL is unset: its links (a digest's
 * "open" and unsubscribe links, an invite's, a password reset's) have no address to point at, so
 * mail carries none; say so at boot, naming the variable.
 */
export function warnMailLinks(ctx: AppContext): void {
  if (ctx.featureEnabled('email') && !ctx.config.server.publicBaseUrl) {
    ctx.log.warn(
      { variable: 'SVC_PUBLIC_BASE_URL' },
      'mail is sent but SVC_PUBLIC_BASE_URL is unset: mail links need it (digests go without their open and unsubscribe links); set it to the address people reach this server at',
    );
  }
}

/** What a test may change in a server: the context's overrides and the WebSocket timings. */
export interface ServerOverrides extends ContextOverrides {
  /** WebSocket keep-alive, buffers and recheck (tests shorten them). */
  realtime?: RealtimeOptions;
  /** Test-only routes in the /api and /s2s/v1 trees (the executor is always the shared one). */
  http?: Omit<HttpAppOptions, 'graphql'>;
}

/**
 * Applies pending migrations (`svc serve` and `svc migrate`; every other command refuses a
 * database with pending ones). Returns the names applied, oldest first.
 */
export async function migrateDatabase(
  config: Config,
  secrets: Secrets,
  overrides: Pick<ContextOverrides, 'log' | 'pgSchema'> = {},
): Promise<string[]> {
  const log = overrides.log ?? createLogger(config.logLevel);
  const db = openAppDatabase(config, secrets, log, {
    pgSchema: overrides.pgSchema,
    passive: true,
    statementTimeoutMs: Math.max(config.database.statementTimeoutMs, MIGRATION_STATEMENT_MS),
  });
  try {
    const newer = await newerReleaseMigrations(db);
    if (newer.length > 0) {
      log.warn(
        { migrations: newer },
        'a newer release has migrated this database: this build runs on it without migrating (a rolling upgrade); replace it with the newer build',
      );
    }
    return await migrateToLatest(db);
  } finally {
    await db.close();
  }
}

/** config -> migrations -> AppContext -> GraphQL -> listeners. No logic of its own. */
export async function startServer(
  config: Config,
  secrets: Secrets,
  overrides: ServerOverrides = {},
): Promise<RunningServer> {
  const applied = await migrateDatabase(config, secrets, overrides);
  const ctx = await createAppContext(config, secrets, overrides);
  if (applied.length > 0) ctx.log.info({ migrations: applied }, 'migrations applied');
  logFeatureStates(ctx);
  warnMailLinks(ctx);
  if (await autovacuumOff(ctx.db)) {
    ctx.log.warn(
      'PostgreSQL runs with autovacuum off: tables are never analyzed and query plans degrade as they grow; turn it on, or run ANALYZE regularly (docs/operations.md)',
    );
  }
  let app: FastifyInstance;
  let metricsServer: http.Server | null = null;
  let realtime: RealtimeServer;
  try {
    // The edges share one executor: the schema is built once per process.
    const graphql = buildGraphqlExecutor();
    app = await buildHttpApp(ctx, { ...overrides.http, graphql });
    await app.listen({ host: config.server.host, port: config.server.port });
    realtime = attachRealtime(ctx, graphql, app.server, overrides.realtime);
    if (config.metricsAddr)
      metricsServer = await startMetricsListener(ctx.metrics, config.metricsAddr);
  } catch (err) {
    await ctx.close();
    throw err;
  }
  const addr = app.server.address();
  const address =
    addr && typeof addr === 'object'
      ? { host: addr.address, port: addr.port }
      : { host: config.server.host, port: config.server.port };
  const maddr = metricsServer?.address();
  const metricsAddress =
    maddr && typeof maddr === 'object' ? { host: maddr.address, port: maddr.port } : null;
  ctx.log.info(
    {
      address,
      metrics: metricsAddress,
      database: ctx.db.dialect,
      nodeEnv: process.env.NODE_ENV ?? null,
    },
    'listening',
  );

  let stopping: Promise<void> | null = null;
  const stop = () =>
    (stopping ??= (async () => {
      ctx.log.info('shutting down');
      // Stop accepting at once; requests in flight run to the end and idle keep-alive
      // connections are closed. Meanwhile WebSocket clients get 1001 (going away): their
      // sockets would otherwise hold the HTTP server open.
      const httpClosed = app.close();
      await realtime.close();
      await httpClosed;
      if (metricsServer)
        await new Promise<void>((resolve) => metricsServer!.close(() => resolve()));
      await ctx.close();
    })());
  return { ctx, app, address, metricsAddress, realtime, stop };
}
