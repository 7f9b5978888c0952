import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import pg from 'pg';
import pino, { type DestinationStream } from 'pino';

import { loadConfig, type Config } from '../../src/config/index.js';
import { loadSecrets, type Secrets } from '../../src/config/secrets.js';
import { createAppContext, type AppContext, type ContextOverrides } from '../../src/context.js';
import type { Db, OpenOptions } from '../../src/db/database.js';
import { openDatabase } from '../../src/db/open.js';
import { buildGraphqlExecutor } from '../../src/graphql/build.js';
import type { GraphqlExecutor } from '../../src/graphql/executor.js';
import { buildHttpApp, type HttpAppOptions } from '../../src/http/app.js';
import { createLogger } from '../../src/logger.js';
import type { Clock } from '../../src/lib/clock.js';
import {
  migrateDatabase,
  startServer,
  type RunningServer,
  type ServerOverrides,
} from '../../src/main.js';

/** Which database this test run uses: `sqlite` (default) or `postgres` (SVC_TEST_DATABASE_URL). */
export const TEST_DB = (process.env.SVC_TEST_DB ?? 'sqlite') as 'sqlite' | 'postgres';
export const PG_URL =
  process.env.SVC_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** Captured log lines of a test app, parsed. */
export class LogCapture {
  readonly lines: Record<string, unknown>[] = [];
  write(chunk: string): void {
    for (const line of chunk.split('\n')) {
      if (line.trim()) this.lines.push(JSON.parse(line) as Record<string, unknown>);
    }
  }
  find(msg: string): Record<string, unknown> | undefined {
    return this.lines.find((l) => l.msg === msg);
  }
}

/** A fresh database for one test app: a temp SQLite directory or a PostgreSQL schema. */
export interface TestDatabase {
  env: Record<string, string>;
  pgSchema?: string;
  dataDir: string;
  drop(): Promise<void>;
}

/**
 * `openDatabase` on the test's database (on PostgreSQL, its own schema), with `options`: for
 * tests of the database layer itself, below the context.
 */
export function openTestDb(database: TestDatabase, options: Partial<OpenOptions> = {}): Db {
  return openDatabase({
    url: TEST_DB === 'postgres' ? PG_URL : null,
    dataDir: database.dataDir,
    schema: database.pgSchema,
    ...options,
  });
}

export async function createTestDatabase(
  dialect: 'sqlite' | 'postgres' = TEST_DB,
): Promise<TestDatabase> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-test-'));
  if (dialect !== 'postgres') {
    return {
      env: { SVC_DATA_DIR: dataDir },
      dataDir,
      drop: async () => fs.rmSync(dataDir, { recursive: true, force: true }),
    };
  }
  const schema = `t_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`;
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  await client.query(`create schema ${schema}`);
  await client.end();
  const url = new URL(PG_URL);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return {
    env: { SVC_DATA_DIR: dataDir, SVC_DATABASE_URL: url.toString() },
    pgSchema: schema,
    dataDir,
    drop: async () => {
      const c = new pg.Client({ connectionString: PG_URL });
      await c.connect();
      await c.query(`drop schema if exists ${schema} cascade`);
      await c.end();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export interface TestAppOptions {
  env?: Record<string, string>;
  clock?: Clock;
  /** Reuse a database (e.g. to restart on the same data). */
  database?: TestDatabase;
  /** Start the periodic jobs (off by default: tests run them with ctx.scheduler.runOnce). */
  jobs?: boolean;
  /** Further context and server overrides (e.g. a short deny-list refresh). */
  overrides?: Partial<ServerOverrides>;
  /** Test-only routes in the /api and /s2s/v1 trees, and an s2s verifier. */
  http?: HttpAppOptions;
  /** Log through the server's own logger (level info, its redaction) instead of one at debug. */
  serverLogger?: boolean;
}

/** A real app on a real database, driven through inject(). */
export interface TestApp {
  ctx: AppContext;
  app: FastifyInstance;
  /** The executor the app's /api route runs. */
  graphql: GraphqlExecutor;
  config: Config;
  database: TestDatabase;
  logs: LogCapture;
  inject: FastifyInstance['inject'];
  /** POSTs one GraphQL request, with an agent's cookies and CSRF header when given. */
  gql(
    query: string,
    variables?: Record<string, unknown>,
    agent?: Agent | null,
    headers?: Record<string, string>,
  ): Promise<GqlResponse>;
  close(): Promise<void>;
}

export interface GqlResponse {
  status: number;
  body: {
    data?: Record<string, any> | null;
    errors?: Array<{ message: string; extensions?: Record<string, any> }>;
  };
  response: LightMyRequestResponse;
}

/** A signed-in client: its cookies and CSRF token. */
export interface Agent {
  id: string;
  username: string;
  cookies: Record<string, string>;
  csrfToken: string;
}

export function configFor(database: TestDatabase, env: Record<string, string> = {}): Config {
  return loadConfig({ SVC_LOG_LEVEL: 'info', ...database.env, ...env });
}

export function secretsFor(database: TestDatabase, env: Record<string, string> = {}): Secrets {
  return loadSecrets({ ...database.env, ...env });
}

/**
 * The context of a test app on a migrated database (what `svc serve` does before it builds the
 * context; createAppContext itself refuses pending migrations).
 */
export async function createMigratedContext(
  database: TestDatabase,
  env: Record<string, string> = {},
  overrides: ContextOverrides = {},
): Promise<AppContext> {
  const config = configFor(database, env);
  const secrets = secretsFor(database, env);
  await migrateDatabase(config, secrets, { log: overrides.log, pgSchema: database.pgSchema });
  return createAppContext(config, secrets, { ...overrides, pgSchema: database.pgSchema });
}

export async function createTestApp(opts: TestAppOptions = {}): Promise<TestApp> {
  const database = opts.database ?? (await createTestDatabase());
  const config = configFor(database, opts.env);
  const logs = new LogCapture();
  const sink = { write: (s: string) => logs.write(s) };
  const log = opts.serverLogger
    ? createLogger('info', sink as DestinationStream)
    : pino({ level: 'debug', base: { service: 'svc' } }, sink);
  const ctx = await createMigratedContext(database, opts.env, {
    checkTransactions: true,
    ...opts.overrides,
    clock: opts.clock,
    log,
  });
  // Every document compiled from its first run (src/graphql/compiled.ts), so the tests exercise
  // the compiled operations; the interpreted first run has its own test (compiled-documents).
  const graphql = opts.http?.graphql ?? buildGraphqlExecutor({ compileAfterRuns: 1 });
  const app = await buildHttpApp(ctx, { ...opts.http, graphql });
  await app.ready();
  const t: TestApp = {
    ctx,
    app,
    graphql,
    config,
    database,
    logs,
    inject: app.inject.bind(app),
    async gql(query, variables, agent, headers = {}) {
      const response = await app.inject({
        method: 'POST',
        url: '/api',
        headers: { 'content-type': 'application/json', ...agentHeaders(agent), ...headers },
        payload: JSON.stringify({ query, variables }),
      });
      return { status: response.statusCode, body: response.json(), response };
    },
    async close() {
      await app.close();
      await ctx.close();
      if (!opts.database) await database.drop();
    },
  };
  return t;
}

/** Cookie and CSRF headers for an agent. */
export function agentHeaders(agent?: Agent | null): Record<string, string> {
  if (!agent) return {};
  const cookie = Object.entries(agent.cookies)
    .map(([k, v]) => `${k}=${v}`)
    .join('; ');
  return { cookie, 'x-csrf-token': agent.csrfToken };
}

/** Reads the cookies a response set. */
export function setCookies(
  response: LightMyRequestResponse,
): Record<string, { value: string; [k: string]: unknown }> {
  const out: Record<string, { value: string }> = {};
  for (const c of response.cookies as Array<{ name: string; value: string }>) out[c.name] = c;
  return out;
}

/** A real listening server (for WebSocket and multi-process tests). */
export async function startTestServer(
  opts: TestAppOptions = {},
): Promise<RunningServer & { database: TestDatabase; url: string; logs: LogCapture }> {
  const database = opts.database ?? (await createTestDatabase());
  const config = configFor(database, { SVC_SERVER_PORT: '0', ...opts.env });
  const logs = new LogCapture();
  const log = pino({ level: 'debug' }, { write: (s: string) => logs.write(s) });
  const server = await startServer(config, secretsFor(database, opts.env), {
    checkTransactions: true,
    http: opts.http,
    ...opts.overrides,
    clock: opts.clock,
    log,
    pgSchema: database.pgSchema,
    noJobs: !opts.jobs,
  });
  const stop = server.stop;
  return {
    ...server,
    database,
    logs,
    url: `http://127.0.0.1:${server.address.port}`,
    stop: async () => {
      await stop();
      if (!opts.database) await database.drop();
    },
  };
}
