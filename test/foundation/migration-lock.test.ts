import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';

import { migrateToLatest, pendingMigrations } from '../../src/db/migrate.js';
import { migrateDatabase } from '../../src/main.js';
import {
  configFor,
  createTestDatabase,
  openTestDb,
  secretsFor,
  PG_URL,
  TEST_DB,
  type TestDatabase,
} from '../_util/app.js';

/** Kysely's own migration lock: one advisory lock for the whole database. */
const KYSELY_DATABASE_WIDE_LOCK = '3853314791062309107';

/** Polls until `check` holds, failing after `ms` (a deadline, not a speed assertion). */
async function eventually(check: () => Promise<boolean>, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe.runIf(TEST_DB === 'postgres')('the migration lock', () => {
  const databases: TestDatabase[] = [];
  const holder = new pg.Client({ connectionString: PG_URL });
  afterAll(async () => {
    await holder.end().catch(() => {});
    await Promise.all(databases.map((d) => d.drop()));
  });

  it('is the schema’s own: a migration elsewhere in the database does not make it wait', async () => {
    const database = await createTestDatabase();
    databases.push(database);
    await holder.connect();
    // Another instance of the database (another schema) is in the middle of its migrations.
    await holder.query(`select pg_advisory_lock(${KYSELY_DATABASE_WIDE_LOCK})`);
    // With the request's 3 s limit, waiting for that lock would fail this migration.
    const db = openTestDb(database, { timeouts: { connectMs: 1500, statementMs: 3000 } });
    try {
      expect((await migrateToLatest(db)).length).toBeGreaterThan(0);
      expect(await pendingMigrations(db)).toEqual([]);
    } finally {
      await db.close();
      await holder.query(`select pg_advisory_unlock(${KYSELY_DATABASE_WIDE_LOCK})`);
    }
  });

  it('makes two processes migrating the same schema take turns', async () => {
    const database = await createTestDatabase();
    databases.push(database);
    const schema = database.pgSchema!;
    await holder.query(`select pg_advisory_lock(hashtextextended('svc migration ' || $1, 0))`, [
      schema,
    ]);
    const name = `migrate-${schema}`;
    const db = openTestDb(database, {
      applicationName: name,
      timeouts: { connectMs: 1500, statementMs: 30_000 },
    });
    try {
      let done = false;
      const migrating = migrateToLatest(db).finally(() => {
        done = true;
      });
      // The second migrator is queued on the schema's lock, not running beside the first.
      await eventually(async () => {
        const r = await holder.query<{ n: number }>(
          `select count(*)::int as n from pg_locks l join pg_stat_activity a on a.pid = l.pid
           where l.locktype = 'advisory' and not l.granted and a.application_name = $1`,
          [name],
        );
        return r.rows[0]!.n === 1;
      });
      expect(done).toBe(false);
      expect((await pendingMigrations(db)).length).toBeGreaterThan(0);
      await holder.query(`select pg_advisory_unlock(hashtextextended('svc migration ' || $1, 0))`, [
        schema,
      ]);
      expect((await migrating).length).toBeGreaterThan(0);
      expect(await pendingMigrations(db)).toEqual([]);
    } finally {
      await db.close();
    }
  });

  it('lets `svc serve` wait for another process’s migration longer than a request may take', async () => {
    const database = await createTestDatabase();
    databases.push(database);
    const key = `hashtextextended('svc migration ' || $1, 0)`;
    await holder.query(`select pg_advisory_lock(${key})`, [database.pgSchema]);
    // The configured limit of one statement is the request's (3 s by default); the other
    // process holds the lock past it.
    const config = configFor(database, { SVC_DATABASE_STATEMENT_TIMEOUT_MS: '1000' });
    expect(config.database.statementTimeoutMs).toBe(1000);
    const migrating = migrateDatabase(config, secretsFor(database));
    await new Promise((r) => setTimeout(r, 2500));
    await holder.query(`select pg_advisory_unlock(${key})`, [database.pgSchema]);
    expect((await migrating).length).toBeGreaterThan(0);
  });
});
