import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { Db } from '../../src/db/database.js';
import { pages } from '../../src/data/export/paged.js';
import { createTestDatabase, openTestDb, type TestDatabase } from '../_util/app.js';

// The export's one paged reader: every row once, in key order, across pages that end in the
// middle of a run of equal first keys (the case a comparison of the first key alone gets wrong).

interface Row {
  at: number;
  id: string;
  body: string;
}

describe('export paged reader', () => {
  let database: TestDatabase;
  let db: Db;
  let k: Kysely<{ paged_rows: Row }>;

  beforeAll(async () => {
    database = await createTestDatabase();
    db = openTestDb(database);
    k = db.kysely as unknown as Kysely<{ paged_rows: Row }>;
    await k.schema
      .createTable('paged_rows')
      .addColumn('at', 'bigint', (c) => c.notNull())
      .addColumn('id', 'text', (c) => c.notNull().primaryKey())
      .addColumn('body', 'text', (c) => c.notNull())
      .execute();
    const rows: Row[] = [];
    // 23 rows: seven share one time, so pages of 3 and 5 end inside the run.
    for (let i = 0; i < 23; i++) {
      const at = i >= 5 && i < 12 ? 5 : i;
      rows.push({ at, id: `r${String(22 - i).padStart(2, '0')}`, body: `row ${i}` });
    }
    await k.insertInto('paged_rows').values(rows).execute();
  });

  afterAll(async () => {
    await db?.close();
    await database?.drop();
  });

  it('reads every row once in (at, id) order, whatever the page size', async () => {
    const all = await k.selectFrom('paged_rows').selectAll().orderBy('at').orderBy('id').execute();
    expect(all).toHaveLength(23);
    for (const limit of [1, 3, 5, 23, 100]) {
      const seen: Row[] = [];
      let count = 0;
      for await (const page of pages(
        {
          query: k.selectFrom('paged_rows').selectAll().where('body', 'like', 'row %'),
          keys: ['at', 'id'],
          keyOf: (r) => [r.at, r.id],
        },
        limit,
      )) {
        expect(page.length).toBeLessThanOrEqual(limit);
        seen.push(...page);
        count++;
      }
      expect(seen.map((r) => `${Number(r.at)}/${r.id}`)).toEqual(
        all.map((r) => `${Number(r.at)}/${r.id}`),
      );
      expect(count).toBe(Math.ceil(23 / limit));
    }
  });
});
