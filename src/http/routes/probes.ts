import type { FastifyInstance } from 'fastify';

import type { AppContext } from '../../context.js';
import { pendingMigrations } from '../../db/migrate.js';
import { checkServerKeys, type KeyCheck } from '../../services/instance/server-keys.js';

type Check = KeyCheck;
interface Readiness {
  status: 'ok' | 'fail';
  version: string;
  checks: { database: Check; migrations: Check; serverKey: Check; frankingKey: Check };
}

/** How long one readiness result is reused (contract: one second). */
export const READINESS_REUSE_MS = 1000;

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
