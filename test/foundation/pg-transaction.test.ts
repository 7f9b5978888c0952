import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { Db } from '../../src/db/database.js';
import type { Tx } from '../../src/db/transaction.js';
import {
  createTestDatabase,
  openTestDb,
  PG_URL,
  TEST_DB,
  type TestDatabase,
} from '../_util/app.js';

// PostgreSQL transactions run without Kysely's transaction machinery (src/db/postgres/transactions.ts):
// the connection is taken at the first statement, given back at the end whatever happened, and
// the transaction keeps Kysely's rules (one connection, atomic, nothing after the end).
describe.runIf(TEST_DB === 'postgres')('PostgreSQL transactions', () => {
  let database: TestDatabase;
  let db: Db;
  const sent: string[] = [];

  beforeAll(async () => {
    database = await createTestDatabase();
    db = openTestDb(database, {
      poolSize: 4,
      checkNesting: true,
      onStatement: (text) => sent.push(text),
    });
    await sql`create table tx_t (id text primary key, n integer not null check (n >= 0))`.execute(
      db.kysely,
    );
  });
  afterAll(async () => {
    await db?.close();
    await database?.drop();
  });

  const rows = async () =>
    (await sql<{ id: string; n: number }>`select id, n from tx_t order by id`.execute(db.kysely))
      .rows;
  const inUse = () => db.poolStats().total - db.poolStats().idle;

  it('takes a connection at the first statement only, and gives it back after the commit', async () => {
    sent.length = 0;
    const seen: number[] = [];
    await db.transaction(async (tx) => {
      seen.push(inUse());
      await tx.db
        .insertInto('tx_t' as never)
        .values({ id: 'a', n: 1 } as never)
        .execute();
      seen.push(inUse());
    });
    expect(seen).toEqual([0, 1]);
    expect(inUse()).toBe(0);
    expect(sent.map((s) => s.split(' ')[0])).toEqual(['begin', 'insert', 'commit']);
    expect(await rows()).toEqual([{ id: 'a', n: 1 }]);
  });

  it('sends nothing and takes no connection for a transaction of nothing', async () => {
    sent.length = 0;
    expect(await db.transaction(async () => 'done')).toBe('done');
    expect(sent).toEqual([]);
    expect(inUse()).toBe(0);
  });

  /** Inserts `ids` at once on `tx`: the server process each insert ran on. */
  const insertAtOnce = (tx: Tx, ids: string[]) =>
    Promise.all(
      ids.map(async (id, i) => {
        await tx.db
          .insertInto('tx_t' as never)
          .values({ id, n: i } as never)
          .execute();
        return (await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(tx.db)).rows[0]!
          .pid;
      }),
    );

  it('runs the statements of one transaction on one connection, and commits them together', async () => {
    const other = new pg.Client({ connectionString: PG_URL });
    await other.connect();
    try {
      const counted = () =>
        other
          .query<{ n: number }>(`select count(*)::int as n from "${database.pgSchema}".tx_t`)
          .then((r) => r.rows[0]!.n);
      const pids = await db.transaction(async (tx) => {
        const ran = await insertAtOnce(tx, ['b', 'c', 'd']);
        // Not visible from another connection before the commit.
        expect(await counted()).toBe(1);
        return ran;
      });
      expect(new Set(pids).size).toBe(1);
      expect(await counted()).toBe(4);
    } finally {
      await other.end();
    }
    expect((await rows()).map((r) => r.id)).toEqual(['a', 'b', 'c', 'd']);
    expect(inUse()).toBe(0);
  });

  it('rolls back when the nesting check refuses a root query inside the transaction', async () => {
    const refused = await db
      .transaction(async (tx) => {
        await insertAtOnce(tx, ['y', 'z']);
        await sql`select 1`.execute(db.kysely);
      })
      .catch((err: unknown) => err);
    expect(String(refused)).toMatch(/must not run inside a transaction/);
    expect((await rows()).map((r) => r.id)).toEqual(['a', 'b', 'c', 'd']);
    expect(inUse()).toBe(0);
  });

  it('rolls back every statement when one fails, and gives the connection back', async () => {
    const failed = await db
      .transaction(async (tx) => {
        await tx.db
          .insertInto('tx_t' as never)
          .values({ id: 'e', n: 5 } as never)
          .execute();
        await tx.db
          .insertInto('tx_t' as never)
          .values({ id: 'f', n: -1 } as never)
          .execute();
      })
      .catch((err: unknown) => err);
    expect(String(failed)).toMatch(/check constraint/);
    expect((await rows()).map((r) => r.id)).toEqual(['a', 'b', 'c', 'd']);
    expect(inUse()).toBe(0);
  });

  it('rolls back when the callback throws after its statements', async () => {
    sent.length = 0;
    await expect(
      db.transaction(async (tx) => {
        await tx.db
          .insertInto('tx_t' as never)
          .values({ id: 'g', n: 7 } as never)
          .execute();
        throw new Error('changed my mind');
      }),
    ).rejects.toThrow('changed my mind');
    expect(sent.map((s) => s.split(' ')[0])).toEqual(['begin', 'insert', 'rollback']);
    expect((await rows()).map((r) => r.id)).toEqual(['a', 'b', 'c', 'd']);
    expect(inUse()).toBe(0);
  });

  it('fails a commit PostgreSQL refuses, rolls it back and gives the connection back', async () => {
    await sql`create table tx_deferred (id text primary key, parent text not null references tx_t (id) deferrable initially deferred)`.execute(
      db.kysely,
    );
    await expect(
      db.transaction(async (tx) => {
        await tx.db
          .insertInto('tx_deferred' as never)
          .values({ id: 'x', parent: 'nobody' } as never)
          .execute();
      }),
    ).rejects.toThrow(/foreign key/);
    expect(
      (await sql<{ n: number }>`select count(*)::int as n from tx_deferred`.execute(db.kysely))
        .rows[0]!.n,
    ).toBe(0);
    expect(inUse()).toBe(0);
  });

  it('refuses a statement on the transaction after it has ended', async () => {
    let kept: Tx | undefined;
    await db.transaction(async (tx) => {
      kept = tx;
      await tx.db
        .selectFrom('tx_t' as never)
        .select('id' as never)
        .execute();
    });
    await expect(
      kept!.db
        .insertInto('tx_t' as never)
        .values({ id: 'late', n: 1 } as never)
        .execute(),
    ).rejects.toThrow(/transaction has ended/);
    expect((await rows()).map((r) => r.id)).not.toContain('late');
    expect(inUse()).toBe(0);
  });
});
