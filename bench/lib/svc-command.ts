import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

// The built `svc` command run as its own process, timed: wall seconds, and CPU seconds and peak
// RSS by GNU time where /usr/bin/time exists (null elsewhere). For the scenarios that measure a
// whole command (data, import).

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');
const bin = path.join(root, 'bin/svc.js');
const gnuTime = fs.existsSync('/usr/bin/time') ? '/usr/bin/time' : null;

export interface TimedCommand {
  wallS: number;
  cpuS: number | null;
  maxRssMiB: number | null;
  stdout: string;
}

/**
 * Runs `svc <args>` with `env` (PATH kept, logs at warn) and resolves once it exited 0; throws
 * with the end of its stderr otherwise. `scratch` is a folder for GNU time's report.
 */
export async function runSvc(
  args: string[],
  env: Record<string, string>,
  scratch: string,
): Promise<TimedCommand> {
  const timeFile = path.join(scratch, `time-${Date.now()}`);
  const [command, argv] = gnuTime
    ? [gnuTime, ['-f', '%U %S %M', '-o', timeFile, process.execPath, bin, ...args]]
    : [process.execPath, [bin, ...args]];
  const started = performance.now();
  const child = spawn(command, argv, {
    env: { PATH: process.env.PATH ?? '', SVC_LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
  child.stderr.on('data', (b: Buffer) => (stderr = (stderr + b.toString()).slice(-4000)));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  const wallS = (performance.now() - started) / 1000;
  if (code !== 0) throw new Error(`svc ${args.join(' ')} exited ${code}: ${stderr}`);
  let cpuS: number | null = null;
  let maxRssMiB: number | null = null;
  if (gnuTime) {
    const [user, system, maxKiB] = fs
      .readFileSync(timeFile, 'utf8')
      .trim()
      .split(/\s+/)
      .map(Number);
    cpuS = (user ?? 0) + (system ?? 0);
    maxRssMiB = Math.round((maxKiB ?? 0) / 1024);
  }
  return { wallS, cpuS, maxRssMiB, stdout };
}
