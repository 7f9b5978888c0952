import path from 'node:path';

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
