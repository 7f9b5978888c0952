import { sql, type CompiledQuery } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { Db } from '../../src/db/database.js';
import { preparedQuery } from '../../src/db/statements/prepared.js';
import { createTestDatabase, openTestDb, TEST_DB, type TestDatabase } from '../_util/app.js';

// Compiled statements on the root instance (every prepared query) run without Kysely's executor
// on PostgreSQL (runCompiledDirectly, src/db/database.ts): the answers are the executor's, the
// nesting check still refuses them inside a transaction, and a transaction's own keep Kysely's
// path. SQLite keeps Kysely's path everywhere.
describe.runIf(TEST_DB === 'postgres')('prepared queries on the root instance', () => {
  let database: TestDatabase;
  let db: Db;
  const sent: string[] = [];

  beforeAll(async () => {
    database = await createTestDatabase();
    db = openTestDb(database, {
      checkNesting: true,
      onStatement: (text) => sent.push(text),
    });
    await sql`create table direct_t (id text primary key, n integer not null)`.execute(db.kysely);
  });
  afterAll(async () => {
    await db?.close();
    await database?.drop();
  });

  const insert = preparedQuery(2, (k, id: string, n: number) =>
    k.insertInto('direct_t' as never).values({ id, n } as never),
  );
  const bump = preparedQuery(1, (k, min: number) =>
    k
      .updateTable('direct_t' as never)
      .set({ n: sql`n + 1` } as never)
      .where('n' as never, '>=', min as never),
  );
  const list = preparedQuery(1, (k, min: number) =>
    k
      .selectFrom('direct_t' as never)
      .select(['id', 'n'] as never)
      .where('n' as never, '>=', min as never)
      .orderBy('id' as never),
  );
  const remove = preparedQuery(1, (k, id: string) =>
    k.deleteFrom('direct_t' as never).where('id' as never, '=', id as never),
  );

  it('answers rows and affected counts as Kysely’s executor does', async () => {
    // Kysely's own executor, which the root instance's `executeQuery` no longer goes through.
    const viaExecutor = <R>(q: { statement: (...a: never[]) => unknown }, ...args: unknown[]) =>
      db.kysely
        .getExecutor()
        .executeQuery<R>(
          (q.statement as (...a: unknown[]) => Parameters<Db['kysely']['executeQuery']>[0])(
            db.kysely,
            ...args,
          ) as CompiledQuery<R>,
        );
    const inserted = await insert(db.kysely, 'a', 1);
    expect(inserted).toEqual({ numAffectedRows: 1n, rows: [] });
    expect(await viaExecutor(insert, 'b', 2)).toEqual(inserted);
    await insert(db.kysely, 'c', 3);

    const bumped = await bump(db.kysely, 2);
    expect(bumped).toEqual({ numAffectedRows: 2n, rows: [] });
    expect(await viaExecutor(bump, 10)).toEqual({ numAffectedRows: 0n, rows: [] });

    const rows = await list(db.kysely, 2);
    expect(rows).toEqual(await viaExecutor(list, 2));
    expect(rows.rows).toEqual([
      { id: 'b', n: 3 },
      { id: 'c', n: 4 },
    ]);
    expect(rows.numAffectedRows).toBeUndefined();
    expect((await list(db.kysely, 100)).rows).toEqual([]);

    expect(await remove(db.kysely, 'a')).toEqual({ numAffectedRows: 1n, rows: [] });
    expect(await remove(db.kysely, 'a')).toEqual({ numAffectedRows: 0n, rows: [] });
  });

  it('fails with the database’s error, and the connection serves the next one', async () => {
    await expect(insert(db.kysely, 'b', 9)).rejects.toThrow(/duplicate key value/);
    expect((await list(db.kysely, 0)).rows.map((r) => r.id)).toEqual(['b', 'c']);
  });

  it('refuses a prepared query on the root instance inside a transaction', async () => {
    await expect(
      db.transaction(async () => {
        await list(db.kysely, 0);
      }),
    ).rejects.toThrow(/a query on db.kysely \(use tx.db\) must not run inside a transaction/);
    // On the transaction's own executor it runs, and commits with it.
    await db.transaction(async (tx) => {
      await insert(tx.db, 'd', 5);
      expect((await list(tx.db, 5)).rows).toEqual([{ id: 'd', n: 5 }]);
    });
    expect((await list(db.kysely, 5)).rows).toEqual([{ id: 'd', n: 5 }]);
  });

  it('sends the statement alone on the root instance, no begin or commit around it', async () => {
    sent.length = 0;
    await list(db.kysely, 0);
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatch(/^select "id", "n" from "direct_t"/);
  });

  it('leaves what Kysely builds itself on its own path', async () => {
    const rows = await db.kysely
      .selectFrom('direct_t' as never)
      .select(['id'] as never)
      .where('id' as never, '=', 'c' as never)
      .execute();
    expect(rows).toEqual([{ id: 'c' }]);
    await expect(
      db.transaction(async () => {
        await db.kysely
          .selectFrom('direct_t' as never)
          .select(['id'] as never)
          .execute();
      }),
    ).rejects.toThrow(/a query on db.kysely \(use tx.db\) must not run inside a transaction/);
  });
});
