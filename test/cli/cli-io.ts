import { runCli } from '../../src/cli/run.js';

/** What one CLI run printed and how it exited. */
export interface CliRun {
  code: number;
  out: string;
  err: string;
}

/** Runs the real CLI in this process with the given environment, capturing its output. */
export async function cli(
  argv: string[],
  env: Record<string, string>,
  stdin = '',
): Promise<CliRun> {
  let out = '';
  let err = '';
  const code = await runCli(argv, {
    out: (s) => (out += s),
    err: (s) => (err += s),
    readStdin: async () => stdin,
    env,
  });
  return { code, out, err };
}
