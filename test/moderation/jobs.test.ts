import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createTestApp, TEST_DB, type TestApp } from '../_util/app.js';
import { Scheduler, type Job } from '../../src/jobs/scheduler.js';
import { DAY_MS, ManualClock } from '../../src/lib/clock.js';

const quiet = pino({ level: 'silent' });

/** A job that waits until released, counting how often it started. */
function gatedJob(name: string) {
  let release!: () => void;
  let started!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const startedP = new Promise<void>((r) => (started = r));
  const state = { runs: 0 };
  const job: Job = {
    name,
    intervalMs: 60_000,
    run: async () => {
      state.runs++;
      started();
      await gate;
    },
  };
  return { job, state, release, started: startedP };
}

describe('periodic jobs', () => {
  let t: TestApp;
  const clock = new ManualClock(Date.UTC(2026, 3, 1));
  beforeAll(async () => {
    t = await createTestApp({ clock, env: { SVC_AUDIT_RETENTION_DAYS: '1' } });
  });
  afterAll(async () => t?.close());

  it('registers the address-expiry and audit-retention jobs', async () => {
    expect(await t.ctx.scheduler.runOnce('ip-block-expiry')).toBe(true);
    expect(await t.ctx.scheduler.runOnce('audit-retention')).toBe(true);
  });

  it('runs a job once at a time in one process', async () => {
    const g = gatedJob('in-process');
    const s = new Scheduler(t.ctx.db, quiet, [g.job]);
    const a = s.runOnce('in-process');
    const b = s.runOnce('in-process');
    await g.started;
    g.release();
    await Promise.all([a, b]);
    expect(g.state.runs).toBe(1);
    await s.stop();
  });

  it.runIf(TEST_DB === 'postgres')(
    'runs a job once across processes sharing PostgreSQL (advisory lock)',
    async () => {
      const other = await createTestApp({ database: t.database, clock });
      try {
        const g = gatedJob('across-processes');
        // Two schedulers on two separate connection pools, as two processes would have.
        const s1 = new Scheduler(t.ctx.db, quiet, [g.job]);
        const s2 = new Scheduler(other.ctx.db, quiet, [g.job]);
        const first = s1.runOnce('across-processes');
        await g.started;
        const second = await s2.runOnce('across-processes');
        expect(second).toBe(false);
        g.release();
        expect(await first).toBe(true);
        expect(g.state.runs).toBe(1);
        // The lock is free again: the other process runs the next round.
        expect(await s2.runOnce('across-processes')).toBe(true);
        expect(g.state.runs).toBe(2);
        await s1.stop();
        await s2.stop();
      } finally {
        await other.close();
      }
    },
  );

  it('survives a crash mid-run: state stays whole and the next run finishes the work', async () => {
    const audit = t.ctx.services.moderation.audit;
    for (let i = 0; i < 7; i++) {
      await t.ctx.db.transaction((tx) =>
        audit.record(tx, { kind: 'command', action: 'test.cmd', actorId: 'cli', target: `c${i}` }),
      );
    }
    await t.ctx.db.transaction((tx) =>
      audit.record(tx, { action: 'test.mod', actorId: 'cli', target: 'keep' }),
    );
    clock.advance(2 * DAY_MS);
    const count = async (kind: string) =>
      (
        await t.ctx.db.kysely
          .selectFrom('audit_log')
          .select('id')
          .where('kind', '=', kind as never)
          .execute()
      ).length;
    // The retention job's own step, cut short after one batch by a crash.
    const crashing: Job = {
      name: 'audit-retention-crash',
      intervalMs: DAY_MS,
      run: async () => {
        await audit.pruneCommandBatch(1, 3);
        throw new Error('process died half-way');
      },
    };
    const s = new Scheduler(t.ctx.db, quiet, [crashing]);
    expect(await s.runOnce('audit-retention-crash')).toBe(false);
    await s.stop();
    expect(await count('command')).toBe(4);
    expect(await count('moderation')).toBe(1);
    // On PostgreSQL the crashed run let go of its lock: another process can take the job.
    const runner =
      TEST_DB === 'postgres'
        ? await createTestApp({
            database: t.database,
            clock,
            env: { SVC_AUDIT_RETENTION_DAYS: '1' },
          })
        : t;
    try {
      expect(await runner.ctx.scheduler.runOnce('audit-retention')).toBe(true);
    } finally {
      if (runner !== t) await runner.close();
    }
    expect(await count('command')).toBe(0);
    expect(await count('moderation')).toBe(1);
  });
});
