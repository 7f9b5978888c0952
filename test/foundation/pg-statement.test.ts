import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { ConnectionStatements } from '../../src/db/postgres/statements.js';
import { PG_URL, TEST_DB } from '../_util/app.js';

// A named statement runs by a query object of svc's own (src/db/postgres/statements.ts): it asks
// PostgreSQL for the row description once per connection, and its answers are the ones
// node-postgres gives when it asks every time.
describe.runIf(TEST_DB === 'postgres')('ConnectionStatements', () => {
  let client: pg.Client;
  let descriptions = 0;
  const describedOn = (c: pg.Client, count: () => void) =>
    (c as unknown as { connection: NodeJS.EventEmitter }).connection.on('rowDescription', count);
  beforeAll(async () => {
    client = new pg.Client({ connectionString: PG_URL });
    await client.connect();
    describedOn(client, () => (descriptions += 1));
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

  const fresh = () => new ConnectionStatements(pg.types.getTypeParser);

  it('asks for the description at the first execution only, and answers as node-postgres', async () => {
    const statements = fresh();
    const text = `select g as n, g::text || 'x' as "a.b", null::text as nothing, g % 2 = 0 as even,
                         jsonb_build_object('k', g) as doc, timestamptz '2026-11-28 03:04:05+00' as at
                    from generate_series(1, $1::int) as g`;
    for (const count of [2, 3, 0, 1]) {
      const before = descriptions;
      const ours = await statements.run(client, 'described_types', text, [count]);
      const plain = await client.query({ text, values: [count] });
      // The plain query is unnamed, so it is described every time: one description.
      expect(descriptions - before).toBe(count === 2 ? 2 : 1);
      expect(ours.rows).toEqual(plain.rows);
      expect(ours.rows).toHaveLength(count);
      ours.rows.forEach((row, i) => expect(Object.keys(row)).toEqual(Object.keys(plain.rows[i])));
      expect(ours.rowCount).toBe(count);
      expect(ours.command).toBe('SELECT');
    }
    const [first] = (await statements.run(client, 'described_types', text, [1])).rows;
    expect(first).toEqual({
      n: 1,
      'a.b': '1x',
      nothing: null,
      even: false,
      doc: { k: 1 },
      at: new Date('2026-11-28T03:04:05Z'),
    });
  });

  it('sends its parameters as node-postgres does (src/db/postgres/bind.ts)', async () => {
    const statements = fresh();
    const text = `select $1::text as ascii, $2::text as accents, $3::text as emoji, $4::text as nothing,
                         $5::int as n, $6::bool as yes, $7::timestamptz as at, $8::text[] as list,
                         $9::jsonb as doc, $10::bytea as bytes, length($11::text) as long_length,
                         $12::numeric as big`;
    const values = [
      'plain',
      'é à ü',
      'emoji 👋🏽 日本語',
      null,
      42,
      true,
      new Date('2026-11-28T03:04:05.678Z'),
      ['a', null, 'b "c"'],
      { k: ['v', 1], ключ: 'значение' },
      Buffer.from([0, 1, 0xfe, 0xff]),
      `${'é'.repeat(70_000)}z`,
      12345678901234567890n,
    ];
    for (let round = 0; round < 2; round += 1) {
      const ours = await statements.run(client, 'described_params', text, values);
      const plain = await client.query({ text, values });
      expect(ours.rows).toEqual(plain.rows);
    }
    const [row] = (await statements.run(client, 'described_params', text, values)).rows;
    expect(row).toMatchObject({ accents: 'é à ü', emoji: 'emoji 👋🏽 日本語', long_length: 70_001 });
    expect(row!.bytes).toEqual(Buffer.from([0, 1, 0xfe, 0xff]));
  });

  it('parses with the type parsers it is given', async () => {
    const statements = new ConnectionStatements((oid, format) =>
      oid === 20 ? (v: string) => Number(v) : pg.types.getTypeParser(oid, format),
    );
    const { rows } = await statements.run(client, 'described_int8', 'select $1::int8 as big', [7]);
    expect(rows).toEqual([{ big: 7 }]);
    const plain = await client.query('select 7::int8 as big');
    expect(plain.rows).toEqual([{ big: '7' }]);
  });

  it('copies a name given twice as node-postgres does: the last one wins', async () => {
    const text = `select 1 as id, 2 as id, 3 as other, '{"polluted": true}'::jsonb as "__proto__"`;
    const ours = await fresh().run(client, 'described_twice', text, []);
    const plain = await client.query(text);
    expect(ours.rows).toEqual(plain.rows);
    const [row] = ours.rows;
    expect(Object.keys(row!)).toEqual(['id', 'other', '__proto__']);
    expect(row).toMatchObject({ id: 2, other: 3 });
    // A column named `__proto__` is a column, not the row's prototype.
    expect(Object.getPrototypeOf(row)).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(row, '__proto__')?.value).toEqual({ polluted: true });
    expect((row as { polluted?: unknown }).polluted).toBeUndefined();
  });

  it('keeps the shape of a statement without rows, and counts what it changed', async () => {
    await client.query('create temporary table described_t (id int primary key, note text)');
    const statements = fresh();
    const text = 'insert into described_t (id, note) values ($1, $2)';
    const before = descriptions;
    for (const id of [1, 2, 3]) {
      const result = await statements.run(client, 'described_insert', text, [id, `n${id}`]);
      expect(result.rowCount).toBe(1);
      expect(result.command).toBe('INSERT');
      expect(result.rows).toEqual([]);
    }
    // NoData, not a row description, answers the one Describe.
    expect(descriptions - before).toBe(0);
    expect(statements.shapeOf('described_insert')).toBeDefined();
    const update = await statements.run(
      client,
      'described_update',
      'update described_t set note = $1 where id >= $2 returning id',
      ['x', 2],
    );
    expect(update).toEqual({ command: 'UPDATE', rowCount: 2, rows: [{ id: 2 }, { id: 3 }] });
    const { rows } = await client.query('select id, note from described_t order by id');
    expect(rows).toEqual([
      { id: 1, note: 'n1' },
      { id: 2, note: 'x' },
      { id: 3, note: 'x' },
    ]);
  });

  it('fails a statement with its error and keeps the connection usable', async () => {
    const statements = fresh();
    const text = 'select 10 / $1::int as q';
    expect((await statements.run(client, 'described_divide', text, [2])).rows).toEqual([{ q: 5 }]);
    await expect(statements.run(client, 'described_divide', text, [0])).rejects.toThrow(
      /division by zero/,
    );
    await expect(statements.run(client, 'described_divide', text, [unbindable])).rejects.toThrow(
      /cannot be sent/,
    );
    await expect(statements.run(client, 'described_divide', text, ['ten'])).rejects.toThrow(
      /invalid input syntax/,
    );
    expect((await statements.run(client, 'described_divide', text, [5])).rows).toEqual([{ q: 2 }]);
    expect((await client.query('select 1 as one')).rows).toEqual([{ one: 1 }]);
  });

  it('runs a statement whose first execution had a parameter that cannot be sent', async () => {
    const statements = fresh();
    const text = 'select $1::int * 2 as twice';
    await expect(
      statements.run(client, 'described_first_fails', text, [unbindable]),
    ).rejects.toThrow(/cannot be sent/);
    expect((await statements.run(client, 'described_first_fails', text, [4])).rows).toEqual([
      { twice: 8 },
    ]);
    expect((await statements.run(client, 'described_first_fails', text, [5])).rows).toEqual([
      { twice: 10 },
    ]);
  });

  it('fails a row its parser refuses, after the answer has ended, and keeps the connection', async () => {
    const statements = new ConnectionStatements((oid, format) =>
      oid === 23
        ? (v: string) => {
            if (v === '2') throw new Error('two is refused');
            return Number(v);
          }
        : pg.types.getTypeParser(oid, format),
    );
    const text = 'select g as n from generate_series(1, $1::int) as g';
    await expect(statements.run(client, 'described_refused', text, [3])).rejects.toThrow(
      /two is refused/,
    );
    expect((await statements.run(client, 'described_refused', text, [1])).rows).toEqual([{ n: 1 }]);
  });

  it('refuses another text under a name the connection already holds', async () => {
    const statements = fresh();
    await statements.run(client, 'described_unique', 'select 1 as one', []);
    await expect(statements.run(client, 'described_unique', 'select 2 as two', [])).rejects.toThrow(
      /Prepared statements must be unique/,
    );
    expect((await statements.run(client, 'described_unique', 'select 1 as one', [])).rows).toEqual([
      { one: 1 },
    ]);
  });

  it('describes a statement again on another connection', async () => {
    const text = 'select $1::int + 1 as next';
    expect((await fresh().run(client, 'described_other', text, [1])).rows).toEqual([{ next: 2 }]);
    const other = new pg.Client({ connectionString: PG_URL });
    await other.connect();
    try {
      let otherDescriptions = 0;
      describedOn(other, () => (otherDescriptions += 1));
      const statements = fresh();
      expect((await statements.run(other, 'described_other', text, [2])).rows).toEqual([
        { next: 3 },
      ]);
      expect((await statements.run(other, 'described_other', text, [3])).rows).toEqual([
        { next: 4 },
      ]);
      expect(otherDescriptions).toBe(1);
    } finally {
      await other.end();
    }
  });

  it('fails an execution whose answer stops coming at the client read timeout', async () => {
    const slow = new pg.Client({ connectionString: PG_URL, query_timeout: 200 });
    await slow.connect();
    try {
      const statements = fresh();
      await expect(
        statements.run(slow, 'described_sleep', 'select pg_sleep($1::float8) as slept', [2]),
      ).rejects.toThrow(/Query read timeout/);
    } finally {
      slow.end().catch(() => {});
    }
  });
});
