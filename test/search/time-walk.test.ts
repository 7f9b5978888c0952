import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { ManualClock, MINUTE_MS } from '../../src/lib/clock.js';
import { insertMessageTerms } from '../../src/services/search/index.js';
import { timeWalkQuery } from '../../src/services/search/walk-queries.js';
import { createTestApp, PG_URL, TEST_DB, type Agent, type TestApp } from '../_util/app.js';
import { signUpAndIn } from '../_util/seed.js';
import { ok, send, sharedChannel } from '../conversations/_helpers.js';

// PostgreSQL walks the index rows in time order (migration 0028-search-time-column; docs/search.md,
// "How a page is found"): each row holds its message's send time, whoever writes it, and each
// step of the walk is planned for its size and position, so it reads the newest rows by
// `message_search_time_idx` alone, without parallel workers.

const EDIT = 'mutation($m: ID!, $t: String!) { editMessage(messageId: $m, text: $t) { id } }';
const OCELOT = { groups: [['ocelot']], prefixes: [], excluded: [] };

describe.runIf(TEST_DB === 'postgres')('search walk in time order (PostgreSQL)', () => {
  const clock = new ManualClock(Date.parse('2030-05-01T00:00:00Z'));
  let t: TestApp;
  let ann: Agent;
  let general: string;
  let client: pg.Client;

  beforeAll(async () => {
    t = await createTestApp({ clock });
    ann = await signUpAndIn(t, { username: 'annwalk' });
    general = await sharedChannel(t, ann, [], 'Walk');
    const url = new URL(PG_URL);
    url.searchParams.set('options', `-c search_path=${t.database.pgSchema}`);
    client = new pg.Client({ connectionString: url.toString() });
    await client.connect();
  });
  afterAll(async () => {
    await client?.end();
    await t?.close();
  });

  const times = async () =>
    (
      await client.query<{ at: string | null; createdAt: string; terms: string }>(
        `select s."at", m."createdAt", s.terms from message_search as s
          join message as m on m.id = s."messageId" order by m."createdAt"`,
      )
    ).rows;

  it("writes each index row with its message's send time, whoever writes it", async () => {
    // A send: the time goes with the row, in the statement that inserts the message too.
    await send(t, ann, general, 'ocelot sent');
    clock.advance(MINUTE_MS);
    // An edit that gives a message its first terms: the trigger reads the message.
    const bare = await send(t, ann, general, '- - -');
    clock.advance(MINUTE_MS);
    ok(await t.gql(EDIT, { m: bare.id, t: 'ocelot edited' }, ann));
    // A rebuild or an import: rows of messages written before.
    const rebuilt = await send(t, ann, general, 'ocelot rebuilt');
    await client.query('delete from message_search where "messageId" = $1', [rebuilt.id]);
    await insertMessageTerms(t.ctx.db.kysely, [{ messageId: rebuilt.id, terms: 'ocelot rebuilt' }]);
    clock.advance(MINUTE_MS);
    // The release before this one: the message and its row in one statement, without the time;
    // the trigger after the statement sets it.
    const workspaceId = (
      await client.query<{ w: string }>(
        'select "workspaceId" as w from conversation where id = $1',
        [general],
      )
    ).rows[0]!.w;
    const at = clock.now().getTime();
    await client.query(
      `with m as (insert into message (id, "conversationId", "workspaceId", "authorId", text,
          "createdAt", "replyCount") values ('walk-older-release', $1, $2, $3, 'ocelot older', $4, 0))
        insert into message_search ("messageId", terms) values ('walk-older-release', 'ocelot older')`,
      [general, workspaceId, ann.id, at],
    );
    const rows = await times();
    expect(rows.map((r) => r.terms.split(' ').slice(0, 2).join(' '))).toEqual([
      'ocelot sent',
      'ocelot edited',
      'ocelot rebuilt',
      'ocelot older',
    ]);
    for (const r of rows) expect(r.at).toBe(r.createdAt);
    expect(Number(rows[3]!.at)).toBe(at);
  });

  it('plans each step for its size and position: the time index alone, no parallel workers', async () => {
    // Enough rows that a step planned for a parameter (a tenth of the rows, as PostgreSQL guesses
    // a `limit $n`) is worth parallel workers at these costs, where 256 rows are not.
    const workspaceId = (
      await client.query<{ w: string }>(
        'select "workspaceId" as w from conversation where id = $1',
        [general],
      )
    ).rows[0]!.w;
    await client.query(
      `insert into message (id, "conversationId", "workspaceId", "authorId", text, "createdAt",
          "replyCount")
        select 'walk-' || g, $1, $2, $3, 'ocelot ' || g, $4::bigint - g * 1000, 0
        from generate_series(1, 40000) g`,
      [general, workspaceId, ann.id, Date.parse('2030-04-01T00:00:00Z')],
    );
    await client.query(`insert into message_search ("messageId", terms)
      select 'walk-' || g, 'ocelot w' || g from generate_series(1, 40000) g`);
    await client.query('analyze message');
    await client.query('analyze message_search');
    await client.query(`set plan_cache_mode = force_generic_plan`);
    await client.query(`set parallel_setup_cost = 10`);
    await client.query(`set parallel_tuple_cost = 0.001`);
    await client.query(`set min_parallel_index_scan_size = 0`);
    await client.query(`set min_parallel_table_scan_size = 0`);

    interface PlanNode {
      'Node Type': string;
      'Index Name'?: string;
      Plans?: PlanNode[];
    }
    let n = 0;
    const plan = async (text: string, params: readonly unknown[]) => {
      const name = `walk_step_${n++}`;
      await client.query(`prepare ${name} as ${text}`);
      const args = params.map((p) => client.escapeLiteral(String(p))).join(', ');
      const res = await client.query(
        `explain (format json) execute ${name}${args ? `(${args})` : ''}`,
      );
      const nodes: string[] = [];
      const walk = (p: PlanNode) => {
        nodes.push(`${p['Node Type']} ${p['Index Name'] ?? ''}`.trim());
        p.Plans?.forEach(walk);
      };
      walk((res.rows[0]['QUERY PLAN'] as Array<{ Plan: PlanNode }>)[0]!.Plan);
      return nodes;
    };
    // Half-way through the 40,000 rows (one a second before 2030-04-01).
    const cursor = { at: Date.parse('2030-03-31T18:30:00Z'), id: 'walk-99999' };
    for (const from of [{}, { after: cursor }, { before: cursor }]) {
      const step = timeWalkQuery(t.ctx.db.kysely, OCELOT, {}, from, 256).compile();
      const nodes = await plan(step.sql, step.parameters);
      expect(nodes).toContain('Index Scan message_search_time_idx');
      expect(nodes.filter((x) => x.startsWith('Gather'))).toEqual([]);
      // The same step with its size as a parameter: the parallel plan these costs provoke.
      const guessed = step.sql.replace(/ limit 256\)/, ` limit $${step.parameters.length + 1})`);
      expect(guessed).not.toBe(step.sql);
      expect(await plan(guessed, [...step.parameters, 256])).toContain('Gather Merge');
    }
    // And the walk finds the newest first.
    const rows = await timeWalkQuery(t.ctx.db.kysely, OCELOT, {}, {}, 3).execute();
    expect(rows.map((r) => r.id)).toEqual(['walk-older-release', rows[1]!.id, rows[2]!.id]);
  });

  it('walks from a cursor of any time a cursor may hold, written into the statement', async () => {
    // Sixteen digits, past what a double holds exactly: a forged cursor, answered as any other.
    const far = (text: string) => Buffer.from(text).toString('base64url');
    const search = `query($after: String, $order: SearchOrder) {
      searchMessages(query: "ocelot", after: $after, order: $order, limit: 2) {
        items { message { id } } } }`;
    for (const [after, order] of [
      [far('9999999999999999:zzz'), 'NEWEST'],
      [far('relevance:9999999999999999:0'), 'RELEVANCE'],
    ]) {
      const page = ok(await t.gql(search, { after, order }, ann)).searchMessages;
      expect(page.items).toHaveLength(2);
    }
  });
});
