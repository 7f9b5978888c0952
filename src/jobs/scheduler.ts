import { sql } from 'kysely';
import type { Logger } from 'pino';

import type { Db } from '../db/database.js';

/** One periodic job. `run` must be idempotent: a crash mid-run is followed by a full rerun. */
export interface Job {
  /** Stable name; also the advisory-lock key on PostgreSQL. */
  name: string;
  intervalMs: number;
  run(): Promise<void>;
}

/** A 64-bit advisory-lock key from a job name (FNV-1a, folded into a signed bigint). */
export function lockKey(name: string): bigint {
  let h = 0xcbf29ce484222325n;
  for (const byte of Buffer.from(`svc-job:${name}`)) {
    h ^= BigInt(byte);
    h = (h * 0x100000001b3n) & 0xffffffffffffffffn;
  }
  return BigInt.asIntN(64, h);
}

/**
 * Runs periodic jobs. On PostgreSQL each run holds a session advisory lock on its own
 * connection, so across processes one runs a job at a time and the others skip that round; on
 * SQLite (one process) runs are only kept from overlapping.
 */
export class Scheduler {
  private readonly timers: NodeJS.Timeout[] = [];
  private readonly running = new Map<string, Promise<boolean>>();
  private stopped = false;

  constructor(
    private readonly db: Db,
    private readonly log: Logger,
    private readonly jobs: Job[],
  ) {}

  start(): void {
    for (const job of this.jobs) {
      const timer = setInterval(() => void this.runOnce(job.name), job.intervalMs);
      timer.unref();
      this.timers.push(timer);
    }
  }

  /** Runs one job now unless it is already running here or elsewhere; true when it ran. */
  async runOnce(name: string): Promise<boolean> {
    const job = this.jobs.find((j) => j.name === name);
    if (!job) throw new Error(`unknown job ${name}`);
    if (this.stopped) return false;
    const current = this.running.get(name);
    if (current) return current;
    const run = this.runLocked(job).finally(() => this.running.delete(name));
    this.running.set(name, run);
    return run;
  }

  private async runLocked(job: Job): Promise<boolean> {
    const started = Date.now();
    try {
      let ran = false;
      if (this.db.dialect === 'postgres') {
        const key = lockKey(job.name).toString();
        await this.db.kysely.connection().execute(async (conn) => {
          const { rows } = await sql<{
            locked: boolean;
          }>`select pg_try_advisory_lock(${key}::bigint) as locked`.execute(conn);
          if (!rows[0]?.locked) return;
          try {
            await job.run();
            ran = true;
          } finally {
            await sql`select pg_advisory_unlock(${key}::bigint)`.execute(conn);
          }
        });
      } else {
        await job.run();
        ran = true;
      }
      if (ran) this.log.debug({ job: job.name, ms: Date.now() - started }, 'job ran');
      return ran;
    } catch (err) {
      this.log.error({ err, job: job.name }, 'job failed');
      return false;
    }
  }

  /** Stops the timers and waits for runs in progress. */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const t of this.timers) clearInterval(t);
    await Promise.allSettled([...this.running.values()]);
  }
}
