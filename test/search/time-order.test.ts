import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { MIGRATION_TABLE, migrateToLatest } from '../../src/db/migrate.js';
import { migrations } from '../../src/db/migrations/index.js';
import { ManualClock, MINUTE_MS } from '../../src/lib/clock.js';
import { DOC_SLOT } from '../../src/services/search/match-queries.js';
import { createTestApp, TEST_DB, type Agent, type TestApp } from '../_util/app.js';
import { signUpAndIn } from '../_util/seed.js';
import { createWorkspace, ok, send } from '../conversations/_helpers.js';

// SQLite keys an index row by its message's place in time (migration 0027-search-time-order;
// docs/search.md, "Scale"), so FTS5 reads matches newest first. PostgreSQL has no such key.

const SEARCH = `query($q: String!, $after: String, $limit: Int) {
  searchMessages(query: $q, after: $after, limit: $limit) {
    items { message { id } } nextCursor } }`;
const CHANNELS = 'query($s: ID!) { channels(serverId: $s) { id name } }';

describe.runIf(TEST_DB === 'sqlite')('search index in time order (SQLite)', () => {
  const clock = new ManualClock(Date.parse('2030-04-01T00:00:00Z'));
  let t: TestApp;
  let ann: Agent;
  let general: string;
  /** Ids newest first, as a search lists them. */
  const sent: string[] = [];

  beforeAll(async () => {
    t = await createTestApp({ clock });
    ann = await signUpAndIn(t, { username: 'annorder' });
    const serverId = (await createWorkspace(t, ann, 'Ordre')).id;
    general = ok(await t.gql(CHANNELS, { s: serverId }, ann)).channels.find(
      (c: any) => c.name === 'general',
    ).id;
    // Three minutes of three messages each, sent within the same millisecond.
    for (let minute = 0; minute < 3; minute += 1) {
      for (let i = 0; i < 3; i += 1) {
        sent.unshift((await send(t, ann, general, `ocelot report ${minute} ${i}`)).id);
      }
      clock.advance(MINUTE_MS);
    }
    // Sends' rows are written a moment after them (search/held-terms.ts): now.
    await t.ctx.services.search.held.flush();
  });
  afterAll(async () => t?.close());

  const docs = () =>
    t.ctx.db.kysely
      .selectFrom('message_search as s')
      .innerJoin('message as m', 'm.id', 's.messageId')
      .select([sql<number>`s.doc`.as('doc'), 'm.createdAt', 'm.id'])
      .where('m.conversationId', '=', general)
      .orderBy(sql`s.doc`)
      .execute();

  /** Every page of `q`, two at a time, as ids. */
  const pages = async (q: string) => {
    const out: string[] = [];
    let after: string | null = null;
    do {
      const page: any = ok(await t.gql(SEARCH, { q, after, limit: 2 }, ann)).searchMessages;
      out.push(...page.items.map((i: any) => i.message.id));
      after = page.nextCursor;
    } while (after);
    return out;
  };

  it('writes each row at the next free place of its millisecond', async () => {
    const rows = await docs();
    expect(rows).toHaveLength(9);
    for (const r of rows) {
      const at = Number(r.createdAt);
      expect(r.doc >= at * DOC_SLOT && r.doc < (at + 1) * DOC_SLOT).toBe(true);
    }
    expect(rows.map((r) => r.id).reverse()).toEqual(sent);
    expect(await pages('ocelot report')).toEqual(sent);
  });

  it('keeps no size of each row in FTS5, which only its ranking reads (migration 0030)', async () => {
    const { rows } = await sql<{ name: string }>`select name from sqlite_schema
      where name like 'message_search_fts%' order by name`.execute(t.ctx.db.kysely);
    const names = rows.map((r) => r.name);
    expect(names).toContain('message_search_fts_data');
    expect(names).not.toContain('message_search_fts_docsize');
    expect(await pages('ocelot')).toEqual(sent);
  });

  it('puts rows written before the migration in time order and rebuilds FTS5 from them', async () => {
    // As an older database had them: numbered as written, here against time.
    const db = t.ctx.db.kysely;
    await sql`update message_search set doc = -doc - 1`.execute(db);
    const rows = await db.selectFrom('message_search').select('messageId').execute();
    const byId = [...rows.map((r) => r.messageId)].sort();
    for (const [i, id] of byId.entries()) {
      await sql`update message_search set doc = ${byId.length - i}
        where "messageId" = ${id}`.execute(db);
    }
    // 0027 and every migration after it, since Kysely runs only migrations after the last one
    // recorded: 0030 makes the FTS5 table again from the rows, the others since change nothing
    // on SQLite or keep its rows as they are.
    const again = Object.keys(migrations).filter((name) => name >= '0027-search-time-order');
    await db
      .deleteFrom(MIGRATION_TABLE as never)
      .where(sql.ref('name'), 'in', again)
      .execute();
    expect(await migrateToLatest(t.ctx.db)).toEqual(again);
    const after = await docs();
    expect(after.map((r) => r.id).reverse()).toEqual(sent);
    for (const r of after) {
      const at = Number(r.createdAt);
      expect(r.doc >= at * DOC_SLOT && r.doc < (at + 1) * DOC_SLOT).toBe(true);
    }
    // FTS5 agrees with its content table, and the triggers follow later writes.
    await sql`insert into message_search_fts(message_search_fts) values ('integrity-check')`.execute(
      db,
    );
    expect(await pages('ocelot')).toEqual(sent);
    const later = await send(t, ann, general, 'ocelot again');
    expect(await pages('ocelot')).toEqual([later.id, ...sent]);
  });
});
