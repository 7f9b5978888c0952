import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { Db } from '../../src/db/database.js';
import {
  createTestDatabase,
  openTestDb,
  PG_URL,
  TEST_DB,
  type TestDatabase,
} from '../_util/app.js';

// The PostgreSQL pool keeps the connections it has opened, however long they stay idle
// (src/db/database.ts): opening one costs the server a process and svc a description and a plan
// of each named statement again.
describe.runIf(TEST_DB === 'postgres')('the PostgreSQL pool', () => {
  let database: TestDatabase;
  let db: Db;
  let admin: pg.Client;
  const name = `svc-pool-kept-${process.pid}`;

  beforeAll(async () => {
    database = await createTestDatabase();
    db = openTestDb(database, {
      poolSize: 3,
      applicationName: name,
      // Connections beyond the pool's size would close after 100 ms idle.
      idleCloseMs: 100,
    });
    admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
  });
  afterAll(async () => {
    await admin?.end();
    await db?.close();
    await database?.drop();
  });

  /** The server processes of the pool's connections. */
  const backends = async () =>
    (
      await admin.query<{ pid: number }>(
        'select pid from pg_stat_activity where application_name = $1 order by pid',
        [name],
      )
    ).rows.map((r) => r.pid);

  it('keeps its connections open while idle, and reuses them', async () => {
    // Three statements at once open three connections.
    await Promise.all([1, 2, 3].map(() => sql`select pg_sleep(0.05)`.execute(db.kysely)));
    const opened = await backends();
    expect(opened).toHaveLength(3);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(await backends()).toEqual(opened);
    expect(db.poolStats()).toEqual({ total: 3, idle: 3, waiting: 0 });
    await Promise.all([1, 2, 3].map(() => sql`select pg_sleep(0.05)`.execute(db.kysely)));
    expect(await backends()).toEqual(opened);
  });
});
