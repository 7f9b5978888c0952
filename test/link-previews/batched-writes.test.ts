import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { Db, Tx } from '../../src/db/database.js';
import { BatchedWrites } from '../../src/services/link-previews/batched-writes.js';
import { createTestDatabase, openTestDb, TEST_DB, type TestDatabase } from '../_util/app.js';

// Finished link previews are stored together (src/services/link-previews/batched-writes.ts):
// writes added within the window share one transaction, at most a batch's worth each, and one
// that fails loses no other.
describe(`batched writes (${TEST_DB})`, () => {
  let database: TestDatabase;
  let db: Db;

  beforeAll(async () => {
    database = await createTestDatabase();
    db = openTestDb(database, {
      checkNesting: true,
    });
    await sql`create table note (id text primary key, body text not null)`.execute(db.kysely);
  });
  afterAll(async () => {
    await db?.close();
    await database?.drop();
  });

  const notes = async () =>
    (await sql<{ id: string }>`select id from note order by id`.execute(db.kysely)).rows.map(
      (r) => r.id,
    );

  it('stores the writes of one window in one transaction', async () => {
    const seen: Tx[] = [];
    const writes = new BatchedWrites<string>(
      db,
      async (tx, id) => {
        seen.push(tx);
        await sql`insert into note (id, body) values (${id}, ${'x'})`.execute(tx.db);
      },
      50,
    );
    await Promise.all(['a1', 'a2', 'a3'].map((id) => writes.add(id)));
    expect(await notes()).toEqual(['a1', 'a2', 'a3']);
    expect(new Set(seen).size).toBe(1);
  });

  it('commits at most maxBatch writes at a time, one transaction after the other', async () => {
    const log: string[] = [];
    const seen = new Set<Tx>();
    const writes = new BatchedWrites<string>(
      db,
      async (tx, id) => {
        if (!seen.has(tx)) tx.onCommit(() => void log.push('commit'));
        seen.add(tx);
        log.push(id);
        await sql`insert into note (id, body) values (${id}, ${'z'})`.execute(tx.db);
      },
      50,
      2,
    );
    await Promise.all(['c1', 'c2', 'c3', 'c4', 'c5'].map((id) => writes.add(id)));
    // Each transaction starts once the one before has committed: none share a commit, so the
    // event loop is held for two writes at most.
    expect(log).toEqual(['c1', 'c2', 'commit', 'c3', 'c4', 'commit', 'c5', 'commit']);
    expect(await notes()).toEqual(['a1', 'a2', 'a3', 'c1', 'c2', 'c3', 'c4', 'c5']);
  });

  it('keeps the others when one write of the batch fails, and says which failed', async () => {
    const writes = new BatchedWrites<string>(
      db,
      async (tx, id) => {
        // b2 collides with a row already there: a constraint error, as a real failure would be.
        await sql`insert into note (id, body) values (${id === 'b2' ? 'a1' : id}, ${'y'})`.execute(
          tx.db,
        );
      },
      50,
    );
    const results = await Promise.allSettled(['b1', 'b2', 'b3'].map((id) => writes.add(id)));
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(await notes()).toEqual(['a1', 'a2', 'a3', 'b1', 'b3', 'c1', 'c2', 'c3', 'c4', 'c5']);
  });
});
