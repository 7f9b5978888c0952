import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { insertMessageTerms } from '../../src/services/search/index.js';
import { createTestApp, PG_URL, TEST_DB, type Agent, type TestApp } from '../_util/app.js';
import { signUpAndIn } from '../_util/seed.js';
import { send, sharedChannel } from '../conversations/_helpers.js';

import { termsOf } from './_rows.js';

// An index row always names a message that is there (docs/search.md, "What is indexed and
// when"): SQLite by its foreign key, PostgreSQL by the index's triggers (migration 0031), which
// take the lock the foreign key took. A message deleted for good takes its row with it, however
// it goes (its own delete, or its conversation's).

describe('search index rows and their messages', () => {
  let t: TestApp;
  let ann: Agent;

  beforeAll(async () => {
    t = await createTestApp();
    ann = await signUpAndIn(t, { username: 'annrows' });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('refuses a row for a message that is not there', async () => {
    const err = await insertMessageTerms(t.ctx.db.kysely, [
      { messageId: 'no-such-message', terms: 'ocelot' },
    ]).then(
      () => null,
      (e: unknown) => e as { code?: string },
    );
    expect(err?.code).toBe(TEST_DB === 'postgres' ? '23503' : 'SQLITE_CONSTRAINT_FOREIGNKEY');
    expect(await termsOf(t, 'no-such-message')).toBeNull();
  });

  it("drops a message's row when the message is deleted for good, or its conversation", async () => {
    const channel = await sharedChannel(t, ann, [], 'Rows');
    const alone = await send(t, ann, channel, 'ocelot alone');
    const withIt = await send(t, ann, channel, 'ocelot with its channel');
    // Sends' rows are written a moment after them on SQLite (search/held-terms.ts): now.
    await t.ctx.services.search.held.flush();
    expect(await termsOf(t, alone.id)).not.toBeNull();
    await t.ctx.db.kysely.deleteFrom('message').where('id', '=', alone.id).execute();
    expect(await termsOf(t, alone.id)).toBeNull();
    expect(await termsOf(t, withIt.id)).not.toBeNull();
    await t.ctx.db.kysely.deleteFrom('conversation').where('id', '=', channel).execute();
    expect(await termsOf(t, withIt.id)).toBeNull();
    const { rows } = await sql<{ n: number }>`select count(*) as n from message_search as s
      where not exists (select 1 from message as m where m.id = s."messageId")`.execute(
      t.ctx.db.kysely,
    );
    expect(Number(rows[0]!.n)).toBe(0);
  });
});

describe.runIf(TEST_DB === 'postgres')('search index rows under concurrency (PostgreSQL)', () => {
  let t: TestApp;
  let ann: Agent;
  const clients: pg.Client[] = [];

  beforeAll(async () => {
    t = await createTestApp();
    ann = await signUpAndIn(t, { username: 'annlock' });
    const url = new URL(PG_URL);
    url.searchParams.set('options', `-c search_path=${t.database.pgSchema}`);
    for (let i = 0; i < 2; i++) {
      const c = new pg.Client({ connectionString: url.toString() });
      await c.connect();
      clients.push(c);
    }
  });
  afterAll(async () => {
    for (const c of clients) await c.end();
    await t?.close();
  });

  it('holds off a delete of the message while a row for it is being written', async () => {
    const channel = await sharedChannel(t, ann, [], 'Locks');
    const m = await send(t, ann, channel, '- - -');
    const [writer, deleter] = clients as [pg.Client, pg.Client];
    // A rebuild or an edit writes the row (without the time, so the trigger reads the message).
    await writer.query('begin');
    await writer.query(`insert into message_search ("messageId", terms) values ($1, 'ocelot')`, [
      m.id,
    ]);
    let deleted = false;
    const deleting = deleter
      .query('delete from message where id = $1', [m.id])
      .then(() => (deleted = true));
    await new Promise((r) => setTimeout(r, 300));
    // The delete waits for the writer's lock on the message, as it waited for the foreign key's.
    expect(deleted).toBe(false);
    await writer.query('commit');
    await deleting;
    // Once the writer committed, the delete took the row with the message: nothing is left over.
    expect(await termsOf(t, m.id)).toBeNull();
  });
});
