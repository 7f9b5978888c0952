import fs from 'node:fs';
import path from 'node:path';

import type { FastifyInstance } from 'fastify';

import type { AppContext } from '../../context.js';
import { pendingMigrations } from '../../db/migrate.js';
import { checkServerKeys, type KeyCheck } from '../../services/instance/index.js';

type Check = KeyCheck;
interface Readiness {
  status: 'ok' | 'fail';
  version: string;
  checks: { database: Check; migrations: Check; serverKey: Check; frankingKey: Check };
}

/** How long one readiness result is reused (contract: one second). */
export const READINESS_REUSE_MS = 1000;

/**
 * How long the database checks may take together: /readyz answers within two seconds even when
 * the database path stalls, with the database check failed.
 */
export const READINESS_TIMEOUT_MS = 1500;

/** After a write failed for lack of space, readiness fails while less than this is free. */
const DISK_FULL_RECOVERY_BYTES = 1024 * 1024;

/** /healthz: unauthenticated, outside the origin check and the deny list, never cached. */
export function registerHealth(app: FastifyInstance, ctx: AppContext): void {
  app.get('/healthz', async (_request, reply) => {
    reply.header('cache-control', 'no-store');
    return { status: 'ok', version: ctx.version };
  });
}

/** /readyz: unauthenticated, outside the origin check, never cached. */
export function registerReadiness(app: FastifyInstance, ctx: AppContext): void {
  let last: { at: number; result: Promise<Readiness> } | null = null;

  app.get('/readyz', async (_request, reply) => {
    // The context clock, so a test can step past the reuse window instead of sleeping.
    const now = ctx.clock.now().getTime();
    if (!last || now - last.at >= READINESS_REUSE_MS || now < last.at)
      last = { at: now, result: readiness(ctx) };
    const result = await last.result;
    reply.header('cache-control', 'no-store');
    return reply.code(result.status === 'ok' ? 200 : 503).send(result);
  });
}

async function readiness(ctx: AppContext): Promise<Readiness> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<Readiness>((resolve) => {
    timer = setTimeout(() => {
      const reason = `the database did not answer within ${READINESS_TIMEOUT_MS} ms`;
      resolve(failed(ctx, { status: 'fail', reason }));
    }, READINESS_TIMEOUT_MS);
  });
  try {
    const disk = await diskCheck(ctx);
    if (disk.status === 'fail') return failed(ctx, disk);
    return await Promise.race([databaseChecks(ctx), timedOut]);
  } finally {
    clearTimeout(timer);
  }
}

/** A result whose database check failed, and the checks that need the database not run. */
function failed(ctx: AppContext, database: Check): Readiness {
  const skipped: Check = { status: 'fail', reason: 'not checked: the database is not reachable' };
  return {
    status: 'fail',
    version: ctx.version,
    checks: { database, migrations: skipped, serverKey: skipped, frankingKey: skipped },
  };
}

/**
 * The data directory's file system: a write that failed for lack of space, or less free space
 * than SVC_DATA_MIN_FREE_MB. Reported as the database check, which cannot store anything then.
 */
async function diskCheck(ctx: AppContext): Promise<Check> {
  let free: number;
  try {
    const stats = await fs.promises.statfs(existingAncestor(ctx.config.dataDir));
    free = stats.bavail * stats.bsize;
  } catch (err) {
    return { status: 'fail', reason: `cannot read the data directory: ${(err as Error).message}` };
  }
  const where = `${ctx.config.dataDir} has ${free} bytes free`;
  if (ctx.db.diskFull() && free < DISK_FULL_RECOVERY_BYTES)
    return { status: 'fail', reason: `the data disk is full: a write failed; ${where}` };
  if (free < ctx.config.dataMinFreeBytes)
    return {
      status: 'fail',
      reason: `the data disk is full: ${where}, under SVC_DATA_MIN_FREE_MB`,
    };
  return { status: 'ok' };
}

async function databaseChecks(ctx: AppContext): Promise<Readiness> {
  const fail = (reason: string): Check => ({ status: 'fail', reason });
  let database: Check = { status: 'ok' };
  let migrations: Check = { status: 'ok' };
  let serverKey: Check = fail('not checked: the database is not reachable');
  let frankingKey: Check = fail('not checked: the database is not reachable');
  try {
    await ctx.db.kysely.selectFrom('instance').select('id').limit(1).execute();
  } catch (err) {
    database = fail(`database query failed: ${(err as Error).message}`);
  }
  if (database.status === 'ok') {
    try {
      const pending = await pendingMigrations(ctx.db);
      if (pending.length > 0) migrations = fail(`pending migrations: ${pending.join(', ')}`);
    } catch (err) {
      migrations = fail(`cannot read the migration table: ${(err as Error).message}`);
    }
    try {
      ({ serverKey, frankingKey } = await checkServerKeys(ctx.db));
    } catch (err) {
      serverKey = fail(`cannot read the keys: ${(err as Error).message}`);
      frankingKey = serverKey;
    }
  } else {
    migrations = fail('not checked: the database is not reachable');
  }
  const checks = { database, migrations, serverKey, frankingKey };
  const ok = Object.values(checks).every((c) => c.status === 'ok');
  return { status: ok ? 'ok' : 'fail', version: ctx.version, checks };
}

/** `dir`, or its nearest ancestor that exists (on PostgreSQL the data directory may not yet). */
function existingAncestor(dir: string): string {
  let current = path.resolve(dir);
  while (!fs.existsSync(current)) {
    const parent = path.dirname(current);
    if (parent === current) break;
    current = parent;
  }
  return current;
}
