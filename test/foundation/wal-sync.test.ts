import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { openDatabase, type Db } from '../../src/db/database.js';
import { createTestDatabase, TEST_DB, type TestDatabase } from '../_util/app.js';

// SQLite flushes its WAL off the event loop (src/db/wal-sync.ts): a commit is acknowledged only
// once the flush is done, while reads, other work and the next group's transactions go on. The
// flush is held here by a gate that runs before each fsync, as a slow disk would hold it.
describe.skipIf(TEST_DB !== 'sqlite')('the WAL flush off the event loop', () => {
  let database: TestDatabase;
  let db: Db;
  let hold: Promise<void> | null = null;
  let release: () => void = () => {};
  const holdFlushes = () => {
    hold = new Promise<void>((resolve) => (release = resolve));
  };
  const openGate = () => {
    hold = null;
    release();
  };

  beforeAll(async () => {
    database = await createTestDatabase();
    db = openDatabase({
      url: null,
      dataDir: database.dataDir,
      checkNesting: true,
      walSyncGate: () => hold ?? Promise.resolve(),
    });
    await sql`create table t (id integer primary key, v text not null)`.execute(db.kysely);
  });
  afterAll(async () => {
    openGate();
    await db?.close();
    await database?.drop();
  });

  const settled = async (p: Promise<unknown>) => {
    let done = false;
    void p.then(
      () => (done = true),
      () => (done = true),
    );
    // Several turns of the event loop: long enough for anything not waiting on the gate.
    for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
    return done;
  };

  it('acknowledges a commit only after the flush, while reads and the next group go on', async () => {
    holdFlushes();
    const syncsBefore = db.walSync!.syncs;
    const first = db.transaction(async (tx) => {
      await sql`insert into t (id, v) values (1, 'first')`.execute(tx.db);
    });
    expect(await settled(first)).toBe(false);
    // Reads are served meanwhile.
    const read = await sql<{ n: number }>`select count(*) as n from t`.execute(db.kysely);
    expect(read.rows[0]!.n).toBe(1);
    // The next transaction runs its work and commits, and waits for the disk in turn.
    let secondRan = false;
    const second = db.transaction(async (tx) => {
      secondRan = true;
      await sql`insert into t (id, v) values (2, 'second')`.execute(tx.db);
    });
    expect(await settled(second)).toBe(false);
    expect(secondRan).toBe(true);
    expect(db.walSync!.syncs).toBe(syncsBefore);
    openGate();
    await Promise.all([first, second]);
    expect(db.walSync!.syncs).toBeGreaterThan(syncsBefore);
  });

  it('makes a write outside a transaction wait for the flush too', async () => {
    holdFlushes();
    const write = sql`insert into t (id, v) values (3, 'alone')`.execute(db.kysely);
    expect(await settled(write)).toBe(false);
    openGate();
    await write;
  });

  it('keeps every acknowledged write when the database is opened again', async () => {
    const again = openDatabase({ url: null, dataDir: database.dataDir });
    try {
      const rows = await sql<{ v: string }>`select v from t order by id`.execute(again.kysely);
      expect(rows.rows.map((r) => r.v)).toEqual(['first', 'second', 'alone']);
    } finally {
      await again.close();
    }
  });
});
