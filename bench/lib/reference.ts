import path from 'node:path';

import { httpLoad } from './http-load.js';
import { freePort, startProcess, type Proc } from './proc.js';
import type { Launch } from './svc.js';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');

/** Starts one of the programs in bench/reference/ on a free loopback port. */
export async function startReference(
  name: string,
  env: Record<string, string> = {},
  nodeArgs: string[] = [],
  launch: Launch = {},
): Promise<{ proc: Proc; url: string }> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const [command, ...prefix] = [...(launch.wrap ?? []), process.execPath];
  const proc = await startProcess(
    command as string,
    [
      ...prefix,
      // BENCH_CPU_PROF=<dir> profiles the references too (their files name the reference's pid).
      ...(process.env.BENCH_CPU_PROF
        ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`]
        : []),
      ...nodeArgs,
      '--import',
      'tsx',
      path.join(root, `bench/reference/${name}.ts`),
    ],
    { ...process.env, PORT: String(port), ...env },
    async () => (await fetch(`${url}/healthz`)).ok,
    launch.readyTimeoutMs,
  );
  return { proc, url };
}

/**
 * The machine's speed in this run: requests a second of the bare Fastify JSON route
 * (bench/reference/fastify-json.ts) under 50 connections for 5 s after a 1 s warm-up, as
 * `graphql-http` measures it. Issue 46's targets are scaled by it: 14,974 was the figure of the
 * machine the first targets were set on.
 */
export async function referenceSpeed(): Promise<number> {
  const ref = await startReference('fastify-json');
  try {
    const body = JSON.stringify({ query: '{ serverInfo { version } }' });
    await httpLoad(`${ref.url}/api`, body, {}, 50, 1);
    return (await httpLoad(`${ref.url}/api`, body, {}, 50, 5)).perSecond;
  } finally {
    await ref.proc.stop();
  }
}

/** The reference route's speed on the machine the scaled targets were first set on. */
export const REFERENCE_SPEED_AT_TARGET = 14_974;
