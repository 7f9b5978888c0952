import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import pg from 'pg';

import { freePort, startProcess, type Proc } from './proc.js';

export const PG_URL =
  process.env.SVC_BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
export const REDIS_URL = process.env.SVC_BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';

export interface Backend {
  kind: 'sqlite' | 'postgres';
  env: Record<string, string>;
  dataDir: string;
  drop(): Promise<void>;
}

/** A fresh database for one benchmark: a temp SQLite directory, or a PostgreSQL schema. */
export async function createBackend(usePg: boolean): Promise<Backend> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-'));
  if (!usePg) {
    return {
      kind: 'sqlite',
      env: { SVC_DATA_DIR: dataDir },
      dataDir,
      drop: async () => fs.rmSync(dataDir, { recursive: true, force: true }),
    };
  }
  const schema = `bench_${Date.now().toString(36)}`;
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  await client.query(`create schema ${schema}`);
  await client.end();
  const url = new URL(PG_URL);
  url.searchParams.set('options', `-c search_path=${schema}`);
  const analyzer = standInForAutovacuum(schema);
  return {
    kind: 'postgres',
    env: {
      SVC_DATA_DIR: dataDir,
      SVC_DATABASE_URL: url.toString(),
      SVC_REDIS_URL: REDIS_URL,
      SVC_REDIS_PREFIX: `${schema}:`,
    },
    dataDir,
    drop: async () => {
      await analyzer.stop();
      const c = new pg.Client({ connectionString: PG_URL });
      await c.connect();
      await c.query(`drop schema if exists ${schema} cascade`);
      await c.end();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * This machine's PostgreSQL runs with autovacuum off (its CI configuration), so a benchmark's
 * tables, filled from empty in a minute, would be planned without statistics for the whole run,
 * as no operator's database is. This does what autovacuum would: the schema's tables analyzed
 * every 20 seconds.
 */
function standInForAutovacuum(schema: string): { stop(): Promise<void> } {
  let running: Promise<void> | null = null;
  const analyze = async () => {
    const c = new pg.Client({ connectionString: PG_URL });
    try {
      await c.connect();
      const { rows } = await c.query<{ name: string }>(
        'select tablename as name from pg_tables where schemaname = $1',
        [schema],
      );
      for (const { name } of rows) await c.query(`analyze ${schema}."${name}"`);
    } catch {
      // The schema may be gone (dropped at the end of the run): nothing to analyze.
    } finally {
      await c.end().catch(() => {});
    }
  };
  const timer = setInterval(() => {
    running ??= analyze().finally(() => (running = null));
  }, 20_000);
  timer.unref();
  return {
    stop: async () => {
      clearInterval(timer);
      await running;
    },
  };
}

export interface SvcServer {
  proc: Proc;
  url: string;
  port: number;
}

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');

/** How a benchmark's server is launched: under another program (`valgrind …`), and how patiently. */
export interface Launch {
  /** A command line the node process runs under, e.g. callgrind's (bench/lib/callgrind.ts). */
  wrap?: string[];
  readyTimeoutMs?: number;
}

/** Starts `svc serve` from the built dist/ on a free loopback port, with every limit off. */
export async function startSvc(
  backend: Backend,
  extraEnv: Record<string, string> = {},
  nodeArgs: string[] = [],
  launch: Launch = {},
): Promise<SvcServer> {
  const port = await freePort();
  const env = {
    // A setting to try (`SVC_WS_WRITE_GATHER_MS=0 npm run bench -- …`, or `NODE_ENV`) reaches
    // every server; what the harness sets below wins.
    ...Object.fromEntries(
      Object.entries(process.env).filter(
        ([k, v]) =>
          ((k.startsWith('SVC_') && !k.startsWith('SVC_BENCH_')) || k === 'NODE_ENV') &&
          v !== undefined,
      ) as Array<[string, string]>,
    ),
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '/tmp',
    SVC_SERVER_HOST: '127.0.0.1',
    SVC_SERVER_PORT: String(port),
    SVC_LOG_LEVEL: 'warn',
    SVC_SIGNUP_REQUIRE_KEYS: 'false',
    SVC_OPEN_REGISTRATION: 'true',
    ...backend.env,
    ...extraEnv,
  };
  const url = `http://127.0.0.1:${port}`;
  const [command, ...prefix] = [...(launch.wrap ?? []), process.execPath];
  const proc = await startProcess(
    command as string,
    [
      ...prefix,
      '--max-old-space-size=4096',
      '--expose-gc',
      // BENCH_CPU_PROF=<dir> writes a V8 CPU profile of each server process there.
      ...(process.env.BENCH_CPU_PROF
        ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`]
        : []),
      // BENCH_NODE_ARGS="--flag --other" adds node flags to each server process (experiments).
      ...(process.env.BENCH_NODE_ARGS?.split(' ').filter(Boolean) ?? []),
      ...nodeArgs,
      path.join(root, 'dist/cli/index.js'),
      'serve',
    ],
    env,
    async () => (await fetch(`${url}/healthz`)).ok,
    launch.readyTimeoutMs,
  );
  return { proc, url, port };
}
