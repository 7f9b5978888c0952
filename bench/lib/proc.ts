import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';

const CLK_TCK = 100;

/**
 * A `/proc/.../stat` line's command name and the fields after it (the first is field 3, the
 * state; utime is field 14, stime 15, cutime 16, cstime 17). The name is in parentheses and may
 * hold spaces or parentheses itself, hence the last ")".
 */
function readStat(stat: string): { name: string; fields: string[] } {
  const close = stat.lastIndexOf(')');
  return {
    name: stat.slice(stat.indexOf('(') + 1, close),
    fields: stat.slice(close + 2).split(' '),
  };
}

/** utime + stime of a stat line, in clock ticks; with the waited-for children's when asked. */
function ticks(stat: string, withChildren = false): number {
  const { fields } = readStat(stat);
  const own = Number(fields[11]) + Number(fields[12]);
  return withChildren ? own + Number(fields[13]) + Number(fields[14]) : own;
}

/** User + system CPU seconds a process has used so far (from /proc). */
export function cpuSeconds(pid: number): number {
  return ticks(fs.readFileSync(`/proc/${pid}/stat`, 'utf8')) / CLK_TCK;
}

/**
 * User + system CPU seconds of a process's main thread (its event loop, for node), without the
 * worker and thread-pool threads `cpuSeconds` counts too.
 */
export function mainThreadCpuSeconds(pid: number): number {
  return ticks(fs.readFileSync(`/proc/${pid}/task/${pid}/stat`, 'utf8')) / CLK_TCK;
}

/** A process's CPU seconds so far, split by thread (main or other) and by user and system time. */
export interface CpuSplit {
  mainUser: number;
  mainSystem: number;
  otherUser: number;
  otherSystem: number;
}

/**
 * `CpuSplit` of a live process, from each of its threads' stat lines: the main thread (its event
 * loop, for node) apart from the rest (V8's helpers, the thread pool), user apart from system time
 * (the kernel's, such as a commit's `fdatasync`). Threads that ended before the reading are not in
 * it; node keeps its helper and pool threads for its lifetime.
 */
export function cpuSplit(pid: number): CpuSplit {
  const split: CpuSplit = { mainUser: 0, mainSystem: 0, otherUser: 0, otherSystem: 0 };
  for (const tid of fs.readdirSync(`/proc/${pid}/task`)) {
    let stat: string;
    try {
      stat = fs.readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    } catch {
      continue; // ended between the listing and the reading
    }
    const { fields } = readStat(stat);
    const user = Number(fields[11]) / CLK_TCK;
    const system = Number(fields[12]) / CLK_TCK;
    if (Number(tid) === pid) {
      split.mainUser += user;
      split.mainSystem += system;
    } else {
      split.otherUser += user;
      split.otherSystem += system;
    }
  }
  return split;
}

/** What a process's threads spent between two `cpuSplit` readings. */
export function cpuSplitSince(before: CpuSplit, after: CpuSplit): CpuSplit {
  return {
    mainUser: after.mainUser - before.mainUser,
    mainSystem: after.mainSystem - before.mainSystem,
    otherUser: after.otherUser - before.otherUser,
    otherSystem: after.otherSystem - before.otherSystem,
  };
}

/**
 * User + system CPU seconds used so far by the machine's PostgreSQL: every process named
 * `postgres`, with the CPU of its waited-for children (a backend that ended moves its time to
 * the postmaster's). The difference of two readings is PostgreSQL's share of the work between
 * them, whoever asked for it: the benchmark's own statements, autovacuum and checkpoints too.
 */
export function postgresCpuSeconds(): number {
  let total = 0;
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue; // ended between the listing and the read
    }
    if (readStat(stat).name === 'postgres') total += ticks(stat, true);
  }
  return total / CLK_TCK;
}

/** Resident set size of a process in bytes. */
export function rssBytes(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const m = /VmRSS:\s+(\d+) kB/.exec(status);
  return m ? Number(m[1]) * 1024 : 0;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(port));
    });
  });
}

export interface Proc {
  child: ChildProcess;
  pid: number;
  output: () => string;
  stop(): Promise<void>;
}

/** Starts a child process and waits until `ready()` resolves true (polled), or fails. */
export async function startProcess(
  command: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  ready: () => Promise<boolean>,
  timeoutMs = 60_000,
): Promise<Proc> {
  const child = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  // BENCH_SERVER_LOG=<file> also appends every started process's output there (for traces).
  const log = process.env.BENCH_SERVER_LOG;
  const keep = (b: Buffer) => {
    if (log) fs.appendFileSync(log, b);
    out += b.toString();
    if (out.length > 200_000) out = out.slice(-100_000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  let exited = false;
  child.once('exit', () => (exited = true));
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (exited) throw new Error(`${command} ${args.join(' ')} exited early:\n${out.slice(-4000)}`);
    if (await ready().catch(() => false)) break;
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`${command} did not become ready:\n${out.slice(-4000)}`);
    }
    await sleep(100);
  }
  return {
    child,
    pid: child.pid as number,
    output: () => out,
    stop: () =>
      new Promise<void>((resolve) => {
        if (exited) return resolve();
        const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
        child.once('exit', () => {
          clearTimeout(timer);
          resolve();
        });
        child.kill('SIGTERM');
      }),
  };
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Percentile of a sorted-or-not list of numbers (nearest rank). */
export function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank] as number;
}
