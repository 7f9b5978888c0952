import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { Db } from '../../src/db/database.js';
import { createTestDatabase, openTestDb, TEST_DB, type TestDatabase } from '../_util/app.js';

// tx.defer (src/db/statements/deferred-writes.ts): on PostgreSQL a transaction's deferred writes go as one
// statement, and a transaction of nothing else is that statement alone, atomic without BEGIN; on
// SQLite they run at once. Counted at the wire: every statement sent to PostgreSQL.
describe(`deferred writes (${TEST_DB})`, () => {
  let database: TestDatabase;
  let db: Db;
  const sent: string[] = [];

  beforeAll(async () => {
    database = await createTestDatabase();
    db = openTestDb(database, {
      checkNesting: true,
      onStatement: (text) => sent.push(text),
    });
    await sql`create table parent (id text primary key, n integer not null)`.execute(db.kysely);
    await sql`create table child (id text primary key, parent_id text not null references parent (id))`.execute(
      db.kysely,
    );
  });
  afterAll(async () => {
    await db?.close();
    await database?.drop();
  });

  const count = async (table: 'parent' | 'child') =>
    Number(
      (await sql<{ n: number }>`select count(*) as n from ${sql.table(table)}`.execute(db.kysely))
        .rows[0]!.n,
    );

  it('commits deferred writes together, a row referring to one inserted before it', async () => {
    sent.length = 0;
    await db.transaction(async (tx) => {
      await tx.defer(sql`insert into parent (id, n) values (${'p1'}, ${1})`.compile(tx.db));
      await tx.defer(
        sql`insert into child (id, parent_id) values (${'c1'}, ${'p1'})`.compile(tx.db),
      );
      await tx.defer(sql`update parent set n = n + ${10} where id = ${'p0'}`.compile(tx.db));
    });
    const statements = [...sent];
    expect(await count('parent')).toBe(1);
    expect(await count('child')).toBe(1);
    if (TEST_DB === 'postgres') {
      // One round trip: no begin, no commit, the three writes in one statement.
      expect(statements).toHaveLength(1);
      expect(statements[0]).toMatch(/^\/\* svc:deferred-writes \*\/ with w0 as \(insert/);
    }
  });

  it('rolls every deferred write back when one of them fails', async () => {
    const before = { parent: await count('parent'), child: await count('child') };
    await expect(
      db.transaction(async (tx) => {
        await tx.defer(sql`insert into parent (id, n) values (${'p2'}, ${2})`.compile(tx.db));
        await tx.defer(
          sql`insert into child (id, parent_id) values (${'c2'}, ${'nobody'})`.compile(tx.db),
        );
      }),
    ).rejects.toThrow(/foreign key/i);
    expect(await count('parent')).toBe(before.parent);
    expect(await count('child')).toBe(before.child);
  });

  it('writes nothing when the transaction throws after deferring', async () => {
    const before = await count('parent');
    sent.length = 0;
    await expect(
      db.transaction(async (tx) => {
        await tx.defer(sql`insert into parent (id, n) values (${'p3'}, ${3})`.compile(tx.db));
        throw new Error('changed my mind');
      }),
    ).rejects.toThrow('changed my mind');
    // Not a statement was sent for it.
    expect(sent).toEqual([]);
    expect(await count('parent')).toBe(before);
  });

  it("runs the deferred writes after the transaction's reads, inside BEGIN and COMMIT", async () => {
    sent.length = 0;
    const seen = await db.transaction(async (tx) => {
      const row = await sql<{ n: number }>`select n from parent where id = ${'p1'}`.execute(tx.db);
      await tx.defer(
        sql`update parent set n = ${row.rows[0]!.n + 1} where id = ${'p1'}`.compile(tx.db),
      );
      return row.rows[0]!.n;
    });
    expect(seen).toBe(1);
    const after = await sql<{ n: number }>`select n from parent where id = ${'p1'}`.execute(
      db.kysely,
    );
    expect(after.rows[0]!.n).toBe(2);
    if (TEST_DB === 'postgres') {
      expect(sent.slice(0, 4).map((s) => s.split(' ')[0])).toEqual([
        'begin',
        'select',
        '/*',
        'commit',
      ]);
    }
  });

  it('leaves a transaction without deferred writes as it was', async () => {
    sent.length = 0;
    await db.transaction(async (tx) => {
      await sql`insert into parent (id, n) values (${'p4'}, ${4})`.execute(tx.db);
    });
    expect(await count('parent')).toBe(2);
    if (TEST_DB === 'postgres') {
      expect(sent.slice(0, 3).map((s) => s.split(' ')[0])).toEqual(['begin', 'insert', 'commit']);
    }
  });
});
