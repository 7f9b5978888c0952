import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { PgRows } from '../../src/db/pg-rows.js';
import { PG_URL, TEST_DB } from '../_util/app.js';

// The named statements' rows, asked for as arrays and made objects (src/db/pg-rows.ts), are the
// rows node-postgres itself would have made.
describe.runIf(TEST_DB === 'postgres')('PgRows', () => {
  let client: pg.Client;
  beforeAll(async () => {
    client = new pg.Client({ connectionString: PG_URL });
    await client.connect();
  });
  afterAll(async () => {
    await client.end();
  });

  const both = async (name: string, text: string, values: unknown[] = []) => {
    const plain = await client.query({ text, values });
    const rows = new PgRows();
    const fast = rows.objects(name, await client.query({ name, text, values, rowMode: 'array' }));
    return { plain: plain.rows as unknown[], fast: fast.rows as unknown[] };
  };

  it('makes the objects node-postgres makes, every type, in column order', async () => {
    const { plain, fast } = await both(
      'pg_rows_types',
      `select g as n, g::text || 'x' as "a.b", null::text as nothing, g % 2 = 0 as even,
              jsonb_build_object('k', g) as doc, timestamptz '2026-11-28 03:04:05+00' as at
         from generate_series(1, $1::int) as g`,
      [3],
    );
    expect(fast).toEqual(plain);
    expect(fast).toHaveLength(3);
    fast.forEach((row, i) => expect(Object.keys(row as object)).toEqual(Object.keys(plain[i]!)));
  });

  it('answers an empty result and reuses the statement’s maker', async () => {
    const rows = new PgRows();
    const text = 'select g as n from generate_series(1, $1::int) as g';
    const empty = await client.query({
      name: 'pg_rows_reuse',
      text,
      values: [0],
      rowMode: 'array',
    });
    expect(rows.objects('pg_rows_reuse', empty).rows).toEqual([]);
    for (const count of [2, 1]) {
      const result = await client.query({
        name: 'pg_rows_reuse',
        text,
        values: [count],
        rowMode: 'array',
      });
      expect(rows.objects('pg_rows_reuse', result).rows).toEqual(
        Array.from({ length: count }, (_, i) => ({ n: i + 1 })),
      );
    }
  });

  it('copies a name given twice as node-postgres does: the last one wins', async () => {
    const { plain, fast } = await both('pg_rows_twice', 'select 1 as id, 2 as id, 3 as other');
    expect(plain).toEqual([{ id: 2, other: 3 }]);
    expect(fast).toEqual(plain);
  });
});
