import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { Db } from '../../src/db/database.js';
import type { Database } from '../../src/db/schema.js';
import { bulkInsert } from '../../src/db/statements/bulk-insert.js';
import { createTestDatabase, openTestDb, type TestDatabase } from '../_util/app.js';

// The import's bulk insert: every row once with its values, across statements (one takes at
// most 30,000 parameters: here 15,000 rows of 2 columns), and the conflict clause it is given.

describe('bulk insert', () => {
  let database: TestDatabase;
  let db: Db;

  beforeAll(async () => {
    database = await createTestDatabase();
    db = openTestDb(database);
    const k = db.kysely as unknown as Kysely<{ bulk_rows: { id: string; n: number | null } }>;
    await k.schema
      .createTable('bulk_rows')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('n', 'integer')
      .execute();
  });

  afterAll(async () => {
    await db?.close();
    await database?.drop();
  });

  it('writes rows past one statement, nulls for absent values, and honours its suffix', async () => {
    const rows = Array.from({ length: 15_007 }, (_, i) => ({
      id: `r${i}`,
      n: i % 10 === 0 ? undefined : i,
    }));
    // The table is the test's own; the function is typed by the schema's tables.
    const insert = (list: typeof rows, suffix?: string) =>
      bulkInsert(
        db.kysely,
        'bulk_rows' as keyof Database & string as 'account',
        ['id', 'n'] as never,
        list as never,
        suffix,
      );
    await insert(rows);
    const k = db.kysely as unknown as Kysely<{ bulk_rows: { id: string; n: number | null } }>;
    const read = await k.selectFrom('bulk_rows').selectAll().execute();
    expect(read).toHaveLength(15_007);
    const byId = new Map(read.map((r) => [r.id, r.n === null ? null : Number(r.n)]));
    expect(byId.get('r0')).toBeNull();
    expect(byId.get('r15006')).toBe(15_006);
    expect(byId.get('r14999')).toBe(14_999);
    await expect(insert(rows.slice(0, 3))).rejects.toThrow();
    await insert(rows.slice(0, 3), ' on conflict ("id") do nothing');
    expect(await k.selectFrom('bulk_rows').select('id').execute()).toHaveLength(15_007);
  });
});
