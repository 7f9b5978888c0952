import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { DescribedQuery, runDescribed, type RowShape } from '../../src/db/pg-statement.js';
import { PG_URL, TEST_DB } from '../_util/app.js';

// A named statement asks PostgreSQL for its row description once per connection
// (src/db/pg-statement.ts); its answers are the ones node-postgres gives when it asks every time.
describe.runIf(TEST_DB === 'postgres')('DescribedQuery', () => {
  let client: pg.Client;
  let descriptions = 0;
  beforeAll(async () => {
    client = new pg.Client({ connectionString: PG_URL });
    await client.connect();
    const connection = (client as unknown as { connection: NodeJS.EventEmitter }).connection;
    connection.on('rowDescription', () => (descriptions += 1));
  });
  afterAll(async () => {
    await client.end();
  });

  /** A parameter node-postgres cannot turn into text: its Bind is never sent. */
  const unbindable = {
    toPostgres: () => {
      throw new Error('this value cannot be sent');
    },
  };

  const run = (shapes: Map<string, RowShape>, name: string, text: string, values: unknown[]) =>
    runDescribed(
      client as unknown as pg.PoolClient,
      new DescribedQuery({ name, text, values, rowMode: 'array' }, shapes),
    );

  it('asks for the description at the first execution only, and answers as node-postgres', async () => {
    const shapes = new Map<string, RowShape>();
    const text = `select g as n, g::text || 'x' as label, null::text as nothing, g % 2 = 0 as even,
                         jsonb_build_object('k', g) as doc, timestamptz '2026-11-28 03:04:05+00' as at
                    from generate_series(1, $1::int) as g`;
    for (const count of [2, 3, 0, 1]) {
      const before = descriptions;
      const ours = await run(shapes, 'described_types', text, [count]);
      const plain = await client.query({ text, values: [count], rowMode: 'array' });
      // The plain query is unnamed, so it is described every time: one description.
      expect(descriptions - before).toBe(count === 2 ? 2 : 1);
      expect(ours.rows).toEqual(plain.rows);
      expect(ours.rows).toHaveLength(count);
      expect(ours.fields.map((f) => f.name)).toEqual([
        'n',
        'label',
        'nothing',
        'even',
        'doc',
        'at',
      ]);
      expect(ours.rowCount).toBe(count);
    }
    const [first] = (await run(shapes, 'described_types', text, [1])).rows as unknown[][];
    expect(first).toEqual([1, '1x', null, false, { k: 1 }, new Date('2026-11-28T03:04:05Z')]);
  });

  it('keeps the shape of a statement without rows, and counts what it changed', async () => {
    await client.query('create temporary table described_t (id int primary key, note text)');
    const shapes = new Map<string, RowShape>();
    const text = 'insert into described_t (id, note) values ($1, $2)';
    for (const id of [1, 2, 3]) {
      const result = await run(shapes, 'described_insert', text, [id, `n${id}`]);
      expect(result.rowCount).toBe(1);
      expect(result.rows).toEqual([]);
    }
    expect(shapes.get('described_insert')).toEqual({ fields: [], parsers: [] });
    const { rows } = await client.query('select id, note from described_t order by id');
    expect(rows).toEqual([
      { id: 1, note: 'n1' },
      { id: 2, note: 'n2' },
      { id: 3, note: 'n3' },
    ]);
  });

  it('fails a statement with its error and keeps the connection usable', async () => {
    const shapes = new Map<string, RowShape>();
    const text = 'select 10 / $1::int as q';
    expect((await run(shapes, 'described_divide', text, [2])).rows).toEqual([[5]]);
    await expect(run(shapes, 'described_divide', text, [0])).rejects.toThrow(/division by zero/);
    await expect(run(shapes, 'described_divide', text, [unbindable])).rejects.toThrow(
      /cannot be sent/,
    );
    expect((await run(shapes, 'described_divide', text, [5])).rows).toEqual([[2]]);
  });

  it('runs a statement whose first execution had a parameter that cannot be sent', async () => {
    const shapes = new Map<string, RowShape>();
    const text = 'select $1::int * 2 as twice';
    await expect(run(shapes, 'described_first_fails', text, [unbindable])).rejects.toThrow(
      /cannot be sent/,
    );
    expect((await run(shapes, 'described_first_fails', text, [4])).rows).toEqual([[8]]);
    expect((await run(shapes, 'described_first_fails', text, [5])).rows).toEqual([[10]]);
  });

  it('describes a statement again on a connection where it is not yet parsed', async () => {
    const shapes = new Map<string, RowShape>();
    const text = 'select $1::int + 1 as next';
    const on = (c: pg.Client, value: number) =>
      runDescribed(
        c as unknown as pg.PoolClient,
        new DescribedQuery(
          { name: 'described_other', text, values: [value], rowMode: 'array' },
          shapes,
        ),
      );
    expect((await on(client, 1)).rows).toEqual([[2]]);
    expect(shapes.has('described_other')).toBe(true);
    const other = new pg.Client({ connectionString: PG_URL });
    await other.connect();
    try {
      let otherDescriptions = 0;
      (other as unknown as { connection: NodeJS.EventEmitter }).connection.on(
        'rowDescription',
        () => (otherDescriptions += 1),
      );
      expect((await on(other, 2)).rows).toEqual([[3]]);
      expect((await on(other, 3)).rows).toEqual([[4]]);
      expect(otherDescriptions).toBe(1);
    } finally {
      await other.end();
    }
  });
});
