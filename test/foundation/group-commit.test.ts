import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createTestApp, TEST_DB, type TestApp } from '../_util/app.js';
import { recordQueries } from '../conversations/_helpers.js';

// Transactions share commits on SQLite (src/db/sqlite/group-commit.ts); the rules must hold the same on
// both databases: each caller succeeds or fails alone, after-commit work runs only for those that
// committed, and nothing is acknowledged before it is committed.
describe('transactions under concurrency', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => t?.close());

  const insert = (cidr: string) =>
    t.ctx.db.kysely
      .insertInto('ip_block')
      .values({ cidr, reason: null, createdAt: 1, expiresAt: null, createdBy: 'test' });

  it('commits the others when one transaction of a group fails, and rolls that one back', async () => {
    const committed: string[] = [];
    const outcomes = await Promise.allSettled(
      Array.from({ length: 20 }, (_, i) =>
        t.ctx.db.transaction(async (tx) => {
          await tx.db
            .insertInto('ip_block')
            .values({
              cidr: `10.0.${i}.0/24`,
              reason: null,
              createdAt: 1,
              expiresAt: null,
              createdBy: 'test',
            })
            .execute();
          if (i === 7) throw new Error('this one fails after writing');
          tx.onCommit(() => {
            committed.push(`10.0.${i}.0/24`);
          });
          return i;
        }),
      ),
    );
    expect(outcomes.filter((o) => o.status === 'rejected')).toHaveLength(1);
    expect((outcomes[7] as PromiseRejectedResult).reason.message).toBe(
      'this one fails after writing',
    );
    const rows = await t.ctx.db.kysely
      .selectFrom('ip_block')
      .select('cidr')
      .where('cidr', 'like', '10.0.%')
      .execute();
    expect(rows.map((r) => r.cidr).sort()).toEqual(committed.sort());
    expect(rows).toHaveLength(19);
    expect(rows.map((r) => r.cidr)).not.toContain('10.0.7.0/24');
    if (TEST_DB === 'sqlite') {
      // The 20 arrived in one turn of the event loop: they shared one commit.
      expect(t.ctx.db.groupCommitter?.lastGroupSize).toBe(20);
    }
  });

  it('keeps the others when the first of a group fails after writing', async () => {
    const write = (i: number) =>
      t.ctx.db.transaction(async (tx) => {
        await tx.db
          .insertInto('ip_block')
          .values({
            cidr: `10.1.${i}.0/24`,
            reason: null,
            createdAt: 1,
            expiresAt: null,
            createdBy: 'test',
          })
          .execute();
        if (i === 0 || i === 5) throw new Error(`${i} fails after writing`);
        return i;
      });
    let outcomes: Array<PromiseSettledResult<number>> = [];
    const texts = await recordQueries(async () => {
      outcomes = await Promise.allSettled(Array.from({ length: 10 }, (_, i) => write(i)));
    });
    expect(outcomes.map((o) => o.status)).toEqual(
      Array.from({ length: 10 }, (_, i) => (i === 0 || i === 5 ? 'rejected' : 'fulfilled')),
    );
    const rows = await t.ctx.db.kysely
      .selectFrom('ip_block')
      .select('cidr')
      .where('cidr', 'like', '10.1.%')
      .execute();
    expect(rows.map((r) => r.cidr).sort()).toEqual(
      [1, 2, 3, 4, 6, 7, 8, 9].map((i) => `10.1.${i}.0/24`).sort(),
    );
    if (TEST_DB === 'sqlite') {
      expect(t.ctx.db.groupCommitter?.lastGroupSize).toBe(10);
      // A savepoint only where a transaction of the group has written before it: none for the
      // first, nor for the second, which follows the first's rollback; none released.
      const savepoints = texts.filter((s) => /^\s*(savepoint|release|rollback to)\b/i.test(s));
      expect(savepoints.filter((s) => /^\s*savepoint/i.test(s))).toHaveLength(8);
      expect(savepoints.filter((s) => /^\s*release/i.test(s))).toEqual([]);
      expect(savepoints.filter((s) => /^\s*rollback to/i.test(s))).toHaveLength(1);
    }
  });

  it('fails a transaction whose statement breaks a constraint without touching its neighbours', async () => {
    await insert('192.0.2.0/24').execute();
    const [dup, fresh] = await Promise.allSettled([
      t.ctx.db.transaction(async (tx) => {
        await tx.db
          .insertInto('ip_block')
          .values({
            cidr: '192.0.2.0/24',
            reason: null,
            createdAt: 2,
            expiresAt: null,
            createdBy: 'test',
          })
          .execute();
      }),
      t.ctx.db.transaction(async (tx) => {
        await tx.db
          .insertInto('ip_block')
          .values({
            cidr: '198.51.100.0/24',
            reason: null,
            createdAt: 2,
            expiresAt: null,
            createdBy: 'test',
          })
          .execute();
      }),
    ]);
    expect(dup.status).toBe('rejected');
    expect(fresh.status).toBe('fulfilled');
    const row = await t.ctx.db.kysely
      .selectFrom('ip_block')
      .selectAll()
      .where('cidr', '=', '198.51.100.0/24')
      .executeTakeFirst();
    expect(row?.createdAt).toBe(2);
  });

  it('answers only after the write is readable by everyone', async () => {
    await t.ctx.db.transaction(async (tx) => {
      await tx.db
        .insertInto('ip_block')
        .values({
          cidr: '203.0.113.0/24',
          reason: 'seen',
          createdAt: 3,
          expiresAt: null,
          createdBy: 'test',
        })
        .execute();
    });
    const row = await t.ctx.db.kysely
      .selectFrom('ip_block')
      .select('reason')
      .where('cidr', '=', '203.0.113.0/24')
      .executeTakeFirst();
    expect(row?.reason).toBe('seen');
  });

  it('logs an after-commit callback that throws, keeps the commit and runs the callbacks after it', async () => {
    const ran: string[] = [];
    await t.ctx.db.transaction(async (tx) => {
      await tx.db
        .insertInto('ip_block')
        .values({
          cidr: '203.0.113.64/26',
          reason: null,
          createdAt: 4,
          expiresAt: null,
          createdBy: 'test',
        })
        .execute();
      tx.onCommit(() => {
        throw new Error('after-commit boom');
      });
      tx.onCommit(() => void ran.push('second'));
    });
    expect(ran).toEqual(['second']);
    const line = t.logs.lines.find((l) => l.msg === 'after-commit work failed');
    expect((line?.err as { message?: string } | undefined)?.message).toBe('after-commit boom');
    const row = await t.ctx.db.kysely
      .selectFrom('ip_block')
      .select('cidr')
      .where('cidr', '=', '203.0.113.64/26')
      .executeTakeFirst();
    expect(row).toBeDefined();
  });

  it('refuses a transaction opened inside another, and rolls the outer one back', async () => {
    await expect(
      t.ctx.db.transaction(async (tx) => {
        await tx.db
          .insertInto('ip_block')
          .values({
            cidr: '198.18.0.0/15',
            reason: null,
            createdAt: 4,
            expiresAt: null,
            createdBy: 't',
          })
          .execute();
        await t.ctx.db.transaction(async () => undefined);
      }),
    ).rejects.toThrow(/must not run inside a transaction/);
    const row = await t.ctx.db.kysely
      .selectFrom('ip_block')
      .select('cidr')
      .where('cidr', '=', '198.18.0.0/15')
      .executeTakeFirst();
    expect(row).toBeUndefined();
  });

  it('refuses a query on the root executor inside a transaction (a deadlock on SQLite)', async () => {
    await expect(
      t.ctx.db.transaction(async () => {
        await t.ctx.db.kysely.selectFrom('instance').select('id').execute();
      }),
    ).rejects.toThrow(/a query on db.kysely \(use tx.db\) must not run inside a transaction/);
    // The group committer is free again: the next transaction commits.
    await t.ctx.db.transaction(async (tx) => {
      await tx.db.selectFrom('instance').select('id').execute();
    });
  });

  it('assertNotTransaction throws inside a transaction, not outside nor in after-commit work', async () => {
    expect(() => t.ctx.db.assertNotTransaction()).not.toThrow();
    let afterCommit: unknown = 'not run';
    await expect(
      t.ctx.db.transaction(async () => {
        t.ctx.db.assertNotTransaction('hashing a password');
      }),
    ).rejects.toThrow(/hashing a password must not run inside a transaction/);
    await t.ctx.db.transaction(async (tx) => {
      tx.onCommit(() => {
        try {
          t.ctx.db.assertNotTransaction();
          afterCommit = null;
        } catch (err) {
          afterCommit = err;
        }
      });
    });
    expect(afterCommit).toBeNull();
  });
});
