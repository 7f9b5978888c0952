import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

import pg from 'pg';
import { to as copyTo } from 'pg-copy-streams';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { copyValue, RowSetDigest } from '../../src/data/copy-text.js';

import {
  agentHeaders,
  createTestApp,
  createTestDatabase,
  PG_URL,
  TEST_DB,
  type TestApp,
  type TestDatabase,
} from '../_util/app.js';
import { buildWorld, type World } from '../_util/world.js';
import { cli } from '../cli/cli-io.js';

import { dumpBlobs, dumpTables } from './_dump.js';

// `svc move --to postgres://...` run as the command on a populated SQLite instance (the world:
// every kind of object, encrypted conversations, stored files) into a fresh PostgreSQL database;
// then the server starts on PostgreSQL and serves the same data to the same sessions
// (docs/operations.md, "Moving to PostgreSQL"). The source is always SQLite and the target always
// PostgreSQL, so the file runs once, in the SQLite pass of the suite.

/** What the API answers about the world, as the people who can see it. */
const READS = {
  me: '{ me { id username displayName } }',
  channels: 'query($s: ID!) { channels(serverId: $s) { id name topic } }',
  messages:
    'query($c: ID!) { messages(conversationId: $c) { items { id text createdAt editedAt author { id } reactions { emoji count } attachments { id fileName sizeBytes url } } } }',
  thread:
    'query($m: ID!) { threadReplies(messageId: $m) { items { id text createdAt author { id } } } }',
  encrypted: 'query($c: ID!) { messages(conversationId: $c) { items { id createdAt ciphertext } } }',
  emoji: 'query($s: ID!) { customEmojis(serverId: $s) { name url createdAt } }',
};

describe.skipIf(TEST_DB === 'postgres')('svc move --to postgres://', () => {
  let world: World;
  let source: TestDatabase;
  let target: TestDatabase;
  let movedTo: TestDatabase;
  let app: TestApp | null = null;
  const before: Record<string, unknown> = {};

  async function readAll(as: (q: string, v: Record<string, unknown>) => Promise<unknown>) {
    const { ids } = world;
    return {
      me: await as(READS.me, {}),
      channels: await as(READS.channels, { s: ids.workspace }),
      general: await as(READS.messages, { c: ids.general }),
      thread: await as(READS.thread, { m: ids.message }),
      encrypted: await as(READS.encrypted, { c: ids.encrypted }),
      emoji: await as(READS.emoji, { s: ids.workspace }),
    };
  }

  beforeAll(async () => {
    source = await createTestDatabase('sqlite');
    target = await createTestDatabase('postgres');
    world = await buildWorld({}, { database: source });
    const owner = world.people.owner;
    // Text COPY must escape: tabs, new lines, carriage returns, backslashes, and what is not ASCII.
    const tricky = await world.t.gql(
      'mutation($i: SendMessageInput!) { sendMessage(input: $i) { id } }',
      { i: { conversationId: world.ids.general, text: 'a\tb\nc\r\nd \\N \\ é ✓ 🎉 \u0001x \u000b \u000c \b' } },
      owner,
    );
    expect(tricky.body.errors).toBeUndefined();
    Object.assign(
      before,
      await readAll(async (q, v) => {
        const res = await world.t.gql(q, v, owner);
        expect(res.body.errors, q).toBeUndefined();
        return res.body.data;
      }),
    );
    await world.close();
    // The stored files stay where they are: the server on PostgreSQL keeps SVC_DATA_DIR.
    movedTo = {
      env: { ...target.env, SVC_DATA_DIR: source.dataDir },
      pgSchema: target.pgSchema,
      dataDir: source.dataDir,
      drop: async () => {},
    };
  }, 180_000);

  afterAll(async () => {
    await app?.close();
    await source?.drop();
    await target?.drop();
  });

  const sqliteHash = () =>
    createHash('sha256')
      .update(fs.readFileSync(path.join(source.dataDir, 'svc.sqlite')))
      .digest('hex');

  it('copies every row, leaves the source untouched, and the server runs on PostgreSQL', async () => {
    const hashBefore = sqliteHash();
    const rowsBefore = await dumpTables(source);
    const run = await cli(['move', '--to', target.env.SVC_DATABASE_URL!], source.env);
    expect(run.err).toMatch(/^svc move: \d+ tables, [\d,]+ rows copied and checked .* in [\d.]+ s\n$/);
    expect(run.code).toBe(0);
    const printed = JSON.parse(run.out);
    expect(printed.counts.message).toBe(rowsBefore.message!.length);
    expect(printed.migrationsApplied).toEqual([]);

    // The source: not a byte changed.
    expect(sqliteHash()).toBe(hashBefore);
    expect(await dumpTables(source)).toEqual(rowsBefore);
    // The target: every table, every row, every value (ids, times, keys, file names).
    const after = await dumpTables(movedTo);
    expect(Object.keys(after).sort()).toEqual(Object.keys(rowsBefore).sort());
    for (const table of Object.keys(rowsBefore)) {
      expect(after[table], table).toEqual(rowsBefore[table]);
    }

    // The server on PostgreSQL: the same keys, the same sessions, the same answers.
    app = await createTestApp({ database: movedTo });
    const owner = world.people.owner;
    const now = await readAll(async (q, v) => {
      const res = await app!.gql(q, v, owner);
      expect(res.body.errors, q).toBeUndefined();
      return res.body.data;
    });
    expect(now).toEqual(before);
    const file = await app.inject({
      method: 'GET',
      url: `/api/attachments/${world.ids.attachment}/download`,
      headers: agentHeaders(world.people.member),
    });
    expect(file.statusCode).toBe(200);
    expect(file.body).toBe('notes of the world\n');
    expect(await dumpBlobs(movedTo.dataDir)).toEqual(await dumpBlobs(source.dataDir));

    // It goes on as if it had always been there: new rows, new sequence numbers.
    const sent = await app.gql(
      'mutation($i: SendMessageInput!) { sendMessage(input: $i) { id createdAt } }',
      { i: { conversationId: world.ids.general, text: 'after the move' } },
      owner,
    );
    expect(sent.body.errors).toBeUndefined();
  });

  it('refuses a target that is not empty, saying why, and changes nothing', async () => {
    const held = await dumpTables(movedTo);
    const run = await cli(['move', '--to', target.env.SVC_DATABASE_URL!], source.env);
    expect(run.code).toBe(1);
    expect(run.err).toMatch(/already holds \d+ table\(s\); move needs an empty database/);
    expect(await dumpTables(movedTo)).toEqual(held);
  });

  it('refuses bad usage with a message that says what to do', async () => {
    const notPg = await cli(['move', '--to', 'mysql://x@localhost/db'], source.env);
    expect(notPg.code).toBe(2);
    expect(notPg.err).toMatch(/--to takes a PostgreSQL URL/);
    const onPg = await cli(['move', '--to', target.env.SVC_DATABASE_URL!], movedTo.env);
    expect(onPg.code).toBe(2);
    expect(onPg.err).toMatch(/already runs on PostgreSQL/);
    const empty = await createTestDatabase('sqlite');
    try {
      const none = await cli(['move', '--to', target.env.SVC_DATABASE_URL!], empty.env);
      expect(none.code).toBe(1);
      expect(none.err).toMatch(/there is no SQLite database at .*svc\.sqlite/);
    } finally {
      await empty.drop();
    }
  });

  it('refuses a source that a running server writes to meanwhile, leaving the target empty', async () => {
    const fresh = await createTestDatabase('postgres');
    const running = await createTestApp({ database: source });
    let sending = true;
    const sender = (async () => {
      for (let i = 0; sending; i++) {
        await running.gql(
          'mutation($i: SendMessageInput!) { sendMessage(input: $i) { id } }',
          { i: { conversationId: world.ids.general, text: `during the move ${i}` } },
          world.people.owner,
        );
      }
    })();
    try {
      const run = await cli(['move', '--to', fresh.env.SVC_DATABASE_URL!], source.env);
      expect(run.code).toBe(1);
      expect(run.err).toMatch(/changed while it was being copied.*stop the server/);
      expect(await dumpTables(fresh)).toEqual({});
    } finally {
      sending = false;
      await sender;
      await running.close();
      await fresh.drop();
    }
  });

  it('writes COPY text as PostgreSQL reads and writes it back, so the checksums compare values', async () => {
    const client = new pg.Client({ connectionString: PG_URL });
    await client.connect();
    try {
      const every = Array.from({ length: 127 }, (_, i) => String.fromCharCode(i + 1)).join('');
      const values = [every, '\\N', 'é ✓ 🎉', ''];
      await client.query('create temporary table copy_text (v text, n bigint)');
      for (const v of values) {
        await client.query('insert into copy_text values ($1, $2)', [v, '9007199254740993']);
      }
      await client.query('insert into copy_text values (null, null)');
      const back = new RowSetDigest();
      await back.addLines(client.query(copyTo('copy copy_text to stdout')) as AsyncIterable<Buffer>);
      const mine = new RowSetDigest();
      for (const v of [...values, null]) {
        const n = v === null ? null : 9007199254740993n;
        mine.add(`${copyValue(v, () => 'v')}\t${copyValue(n, () => 'n')}`);
      }
      expect(back.rows).toBe(5);
      expect(back.hex()).toBe(mine.hex());
      // One value changed changes the checksum.
      const other = new RowSetDigest();
      for (const v of [...values.slice(1), 'x', null]) {
        other.add(`${copyValue(v, () => 'v')}\t${copyValue(v === null ? null : 9007199254740993n, () => 'n')}`);
      }
      expect(other.hex()).not.toBe(mine.hex());
      expect(() => copyValue(Buffer.from('x'), () => 'table t, column c')).toThrow(
        /table t, column c holds binary data/,
      );
    } finally {
      await client.end();
    }
  });
});
