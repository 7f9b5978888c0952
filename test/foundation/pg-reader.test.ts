import net from 'node:net';

import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { readingClient, type ReadingClient } from '../../src/db/postgres/reader.js';
import { ConnectionStatements } from '../../src/db/postgres/statements.js';
import { PG_URL, TEST_DB } from '../_util/app.js';

// svc's clients read PostgreSQL's answers with a reader of svc's own (src/db/postgres/reader.ts): the
// rows of named statements are cut from their messages directly, everything else goes through
// pg-protocol's parser. What it reads must be what node-postgres reads, however the bytes arrive.

/** Every kind of field text the reader treats apart, with the lengths around its limits. */
const VALUES_SQL = `
  select g as n,
         'plain ' || g as ascii,
         '' as empty,
         null::text as nothing,
         'é à ü ' || g as accents,
         'emoji 👋🏽 日本語' as emoji,
         repeat('a', 127) as ascii_127,
         repeat('a', 128) as ascii_128,
         repeat('a', 129) as ascii_129,
         repeat('a', 127) || 'é' as mixed_129_bytes,
         repeat('b', 200) as length_byte_above_127,
         repeat('é', 64) as two_byte_128,
         repeat('x', $2::int) || g as long_ascii,
         repeat('é', $2::int / 2) || g as long_accents,
         g % 2 = 0 as even,
         g::bigint * 1000000000000 as big,
         jsonb_build_object('k', g, 'ключ', 'значение') as doc,
         timestamptz '2026-11-28 03:04:05.678+00' + g * interval '1 second' as at,
         array['a', null, 'b "c"'] as list,
         '\\x00fe'::bytea as bytes
    from generate_series(1, $1::int) as g`;

/** A proxy to PostgreSQL that hands the server's bytes on in pieces of 1 to 7 bytes. */
async function choppingProxy(target: URL): Promise<{ port: number; close: () => Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(target.port || 5432), target.hostname);
    sockets.add(client).add(upstream);
    client.setNoDelay(true);
    client.pipe(upstream);
    let queue = Promise.resolve();
    let piece = 0;
    upstream.on('data', (chunk: Buffer) => {
      upstream.pause();
      queue = queue.then(async () => {
        for (let at = 0; at < chunk.length;) {
          const size = (piece++ % 7) + 1;
          client.write(chunk.subarray(at, at + size));
          at += size;
          // A few pieces to each of the client's reads.
          if (piece % 3 === 0) await new Promise((r) => setImmediate(r));
        }
        upstream.resume();
      });
    });
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('close', end).on('error', end);
    upstream.on('close', end).on('error', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

describe.runIf(TEST_DB === 'postgres')('AnswerReader', () => {
  let plain: pg.Client;
  let reading: ReadingClient;
  let proxy: Awaited<ReturnType<typeof choppingProxy>>;
  let chopped: ReadingClient;

  beforeAll(async () => {
    plain = new pg.Client({ connectionString: PG_URL });
    reading = new (readingClient())({ connectionString: PG_URL });
    proxy = await choppingProxy(new URL(PG_URL));
    const url = new URL(PG_URL);
    url.hostname = '127.0.0.1';
    url.port = String(proxy.port);
    chopped = new (readingClient())({ connectionString: url.toString() });
    await Promise.all([plain.connect(), reading.connect(), chopped.connect()]);
  });
  afterAll(async () => {
    await Promise.all([plain.end(), reading.end(), chopped.end()]);
    await proxy.close();
  });

  const statements = () => new ConnectionStatements(pg.types.getTypeParser);

  it('reads every kind of field of a named statement as node-postgres does', async () => {
    const expected = (await plain.query({ text: VALUES_SQL, values: [3, 70_000] })).rows;
    const ours = statements();
    // The first execution is described (its row description goes through pg-protocol's parser),
    // the later ones are not.
    for (let i = 0; i < 3; i += 1) {
      const answer = await ours.run(reading, 'reader_values', VALUES_SQL, [3, 70_000]);
      expect(answer.rows).toEqual(expected);
      expect(answer.command).toBe('SELECT');
      expect(answer.rowCount).toBe(3);
    }
    const [first] = (await ours.run(reading, 'reader_values', VALUES_SQL, [1, 70_000])).rows;
    expect(first!.accents).toBe('é à ü 1');
    expect(first!.emoji).toBe('emoji 👋🏽 日本語');
    expect(first!.mixed_129_bytes).toBe(`${'a'.repeat(127)}é`);
    expect(first!.two_byte_128).toBe('é'.repeat(64));
    expect(first!.long_accents).toBe(`${'é'.repeat(35_000)}1`);
    expect(first!.empty).toBe('');
    expect(first!.nothing).toBeNull();
  });

  it('reads the same when the bytes arrive in pieces of 1 to 7 bytes', async () => {
    // Fields longer than a piece, and rows of about 1,700 bytes.
    const expected = (await plain.query({ text: VALUES_SQL, values: [40, 300] })).rows;
    const ours = statements();
    let reads = 0;
    const stream = (chopped as unknown as { connection: { stream: NodeJS.EventEmitter } })
      .connection.stream;
    const count = () => (reads += 1);
    stream.on('data', count);
    for (let i = 0; i < 2; i += 1) {
      const answer = await ours.run(chopped, 'reader_values', VALUES_SQL, [40, 300]);
      expect(answer.rows).toEqual(expected);
    }
    stream.off('data', count);
    // The answers (about 70,000 bytes each) came in thousands of reads.
    expect(reads).toBeGreaterThan(5_000);
    // An unnamed query and an error, cut the same way.
    expect((await chopped.query('select 1 as one, $1::text as t', ['é'])).rows).toEqual([
      { one: 1, t: 'é' },
    ]);
    await expect(chopped.query('select 1/0')).rejects.toMatchObject({ code: '22012' });
    expect((await chopped.query('select 2 as two')).rows).toEqual([{ two: 2 }]);
  });

  it('gives command tags and counts of writes', async () => {
    const ours = statements();
    await reading.query('create temporary table reader_t (id int primary key, v text)');
    const insert = await ours.run(
      reading,
      'reader_insert',
      'insert into reader_t (id, v) select g, $1::text from generate_series(1, 5) g',
      ['x'],
    );
    expect(insert).toMatchObject({ command: 'INSERT', rowCount: 5, rows: [] });
    const update = await ours.run(
      reading,
      'reader_update',
      'update reader_t set v = $1 where id > 2 returning id, v',
      ['ü'],
    );
    expect(update.command).toBe('UPDATE');
    expect(update.rowCount).toBe(3);
    expect(update.rows.map((r) => r.v)).toEqual(['ü', 'ü', 'ü']);
    const removed = await ours.run(reading, 'reader_delete', 'delete from reader_t', []);
    expect(removed).toMatchObject({ command: 'DELETE', rowCount: 5 });
  });

  it('passes errors, notices, notifications and transaction status on as before', async () => {
    const ours = statements();
    await expect(
      ours.run(reading, 'reader_fail', 'select 1 / $1::int as n', [0]),
    ).rejects.toMatchObject({ code: '22012', message: 'division by zero' });
    // The connection goes on after the error.
    expect((await ours.run(reading, 'reader_fail', 'select 1 / $1::int as n', [1])).rows).toEqual([
      { n: 1 },
    ]);

    const notices: string[] = [];
    reading.on('notice', (n) => notices.push(n.message ?? ''));
    await reading.query(`do $$ begin raise notice 'heard %', 42; end $$`);
    expect(notices).toEqual(['heard 42']);

    const heard = new Promise<string | undefined>((resolve) =>
      reading.once('notification', (n) => resolve(n.payload)),
    );
    await reading.query('listen reader_channel');
    await plain.query(`notify reader_channel, 'ping é'`);
    expect(await heard).toBe('ping é');

    // ReadyForQuery's status, which node-postgres keeps for the pool: in a transaction, then not.
    const status = () => (reading as unknown as { _txStatus: string | null })._txStatus;
    await reading.query('begin');
    expect(status()).toBe('T');
    // The query fails at ErrorResponse; ReadyForQuery may come in a later read, so wait for it.
    const connection = (reading as unknown as { connection: NodeJS.EventEmitter }).connection;
    const ready = new Promise((resolve) => connection.once('readyForQuery', resolve));
    await expect(reading.query('select 1/0')).rejects.toMatchObject({ code: '22012' });
    await ready;
    expect(status()).toBe('E');
    await reading.query('rollback');
    expect(status()).toBe('I');
  });
});
