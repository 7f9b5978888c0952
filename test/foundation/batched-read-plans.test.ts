import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createTestApp, PG_URL, TEST_DB, type Agent, type TestApp } from '../_util/app.js';
import { DIRECT_SPACE_ID } from '../../src/db/direct-space.js';
import { signUpAndIn } from '../_util/seed.js';
import { findConversationAccess } from '../../src/services/conversations/queries.js';
import { findDeadSessionIds } from '../../src/services/sessions/queries.js';
import { findWorkspaceSubscription } from '../../src/services/workspaces/queries.js';
import { keysetSlice } from '../../src/services/paging/keyset.js';
import { recordQueries, sendRaw, sharedChannel } from '../conversations/_helpers.js';

// The batched reads (src/db/statements/batched-reads.ts) and the named statements (src/db/statements/prepared.ts),
// planned once per connection (force_generic_plan, src/db/database.ts), look each key up by its
// index, as the single read does, even where the planner believes the tables tiny: a fresh database before its first
// ANALYZE, whose generic plans are cached per connection. Joined plainly to the keys, the session
// batch was planned as a scan of every account per batch (16 ms at 3,000 accounts).
describe.skipIf(TEST_DB !== 'postgres')('plans of the batched reads (postgres)', () => {
  let t: TestApp;
  let people: Agent[];
  let channels: string[];
  let client: pg.Client;

  beforeAll(async () => {
    t = await createTestApp();
    const url = new URL(PG_URL);
    url.searchParams.set('options', `-c search_path=${t.database.pgSchema}`);
    client = new pg.Client({ connectionString: url.toString() });
    await client.connect();
    // Thousands of rows the planner has no statistics for (no ANALYZE), as on a server that
    // grew faster than autovacuum looked.
    await client.query(`insert into account (id, username, "usernameKey", "createdAt", "isOperator")
      select 'plan-a' || g, 'plan' || g, 'plan' || g, 0, 0 from generate_series(1, 3000) g`);
    await client.query(`insert into session (id, "tokenHash", "accountId", "createdAt", "expiresAt")
      select 'plan-s' || g, 'plan-h' || g, 'plan-a' || (g % 3000 + 1), 0, 9e12
      from generate_series(1, 6000) g`);
    await client.query(`insert into conversation (id, "workspaceId", kind, name, "isPrivate",
      encrypted, "createdBy", "createdAt", "lastActivityAt")
      select 'plan-c' || g, ${client.escapeLiteral(DIRECT_SPACE_ID)}, 'direct', null, 1, 0,
        'plan-a1', 0, 0
      from generate_series(1, 3000) g`);
    people = [];
    channels = [];
    for (let i = 0; i < 3; i++) {
      people.push(await signUpAndIn(t, { username: `planner${i}` }));
      channels.push(await sharedChannel(t, people[i]!, [], `Plans ${i}`));
    }
  });
  afterAll(async () => {
    await client?.end();
    await t?.close();
  });

  interface PlanNode {
    'Node Type': string;
    'Relation Name'?: string;
    'Index Name'?: string;
    Plans?: PlanNode[];
  }

  /** Every node of the generic plan of `text` with these parameters, as `type relation index`. */
  async function genericPlan(name: string, text: string, params: string[]) {
    await client.query('set plan_cache_mode = force_generic_plan');
    await client.query(`prepare ${name} as ${text}`);
    const literals = params.map((p) => client.escapeLiteral(p)).join(', ');
    const res = await client.query(`explain (format json) execute ${name}(${literals})`);
    const nodes: string[] = [];
    const walk = (n: PlanNode) => {
      nodes.push(`${n['Node Type']} ${n['Relation Name'] ?? ''} ${n['Index Name'] ?? ''}`.trim());
      n.Plans?.forEach(walk);
    };
    walk((res.rows[0]['QUERY PLAN'] as Array<{ Plan: PlanNode }>)[0]!.Plan);
    return nodes;
  }

  it('reads sessions by token hash, and the access read with them by conversation id', async () => {
    const texts = await recordQueries(() =>
      Promise.all(people.map((p, i) => sendRaw(t, p, channels[i]!, 'plan me'))),
    );
    const batch = texts.find((s) => s.includes('unnest') && s.includes('"tokenHash"'));
    expect(batch, texts.join('\n')).toBeDefined();
    const plan = await genericPlan('session_batch', batch!, [
      '{plan-h1,plan-h2}',
      '{plan-c1,""}',
      '1',
    ]);
    expect(plan).toContain('Index Scan session session_tokenHash_key');
    expect(plan).toContain('Index Scan conversation conversation_pkey');
    expect(plan.filter((n) => n.startsWith('Seq Scan'))).toEqual([]);
  });

  it('checks the sessions of subscriptions that start together in one statement, by id', async () => {
    const db = t.ctx.db.kysely;
    const ids = (
      await db
        .selectFrom('session')
        .select('id')
        .where(
          'accountId',
          'in',
          people.map((p) => p.id),
        )
        .execute()
    ).map((r) => r.id);
    expect(ids.length).toBeGreaterThanOrEqual(people.length);
    const now = Date.now();
    let answers: string[][] = [];
    const texts = await recordQueries(async () => {
      answers = await Promise.all(
        [...ids, 'plan-missing'].map((id) => findDeadSessionIds(db, [id], now)),
      );
    });
    // Each its own answer: the live ones none, the missing one itself.
    expect(answers).toEqual([...ids.map(() => []), ['plan-missing']]);
    const checks = texts.filter((s) => s.includes('"session"'));
    expect(checks).toHaveLength(1);
    expect(checks[0]).toContain('unnest');
    const plan = await genericPlan('session_live_batch', checks[0]!, ['{plan-s1,plan-s2}', '1']);
    expect(plan).toContain('Index Scan session session_pkey');
    expect(plan.filter((n) => n.startsWith('Seq Scan'))).toEqual([]);
  });

  it('reads accesses by conversation id, not by a scan of every conversation', async () => {
    // Checks that are not a request's first (or come from no request) batch on their own.
    const texts = await recordQueries(() =>
      Promise.all(
        people.map((p, i) => findConversationAccess(t.ctx.db.kysely, channels[i]!, p.id)),
      ),
    );
    const batch = texts.find((s) => s.includes('unnest') && s.includes('"conversation"'));
    expect(batch, texts.join('\n')).toBeDefined();
    const plan = await genericPlan('access_batch', batch!, [
      '{plan-c1,plan-c2}',
      '{plan-a1,plan-a2}',
    ]);
    expect(plan).toContain('Index Scan conversation conversation_pkey');
    expect(plan.filter((n) => n.startsWith('Seq Scan'))).toEqual([]);
  });

  it('has every connection plan a named statement once: force_generic_plan', async () => {
    const { rows } = await sql<{
      plan_cache_mode: string;
    }>`show plan_cache_mode`.execute(t.ctx.db.kysely);
    expect(rows[0]?.plan_cache_mode).toBe('force_generic_plan');
  });

  it("reads a conversation's newest page by its index in the generic plan", async () => {
    const texts = await recordQueries(() =>
      t.gql(
        'query($c: ID!) { messages(conversationId: $c, limit: 30) { items { id } } }',
        { c: channels[0] },
        people[0],
      ),
    );
    const page = texts.find((s) => /from "message" where/.test(s) && s.includes('order by'));
    expect(page, texts.join('\n')).toBeDefined();
    const plan = await genericPlan('newest_page', page!, ['plan-c1', '31']);
    expect(plan.some((n) => n.startsWith('Index') && n.includes(' message '))).toBe(true);
    expect(plan.filter((n) => n.startsWith('Seq Scan'))).toEqual([]);
  });

  it("reads a subscription's workspace and conversations by their indexes in the generic plan", async () => {
    const texts = await recordQueries(() =>
      findWorkspaceSubscription(t.ctx.db.kysely, DIRECT_SPACE_ID, people[0]!.id),
    );
    expect(texts).toHaveLength(1);
    // The direct space holds every direct conversation (3,000 here): read from the caller's
    // memberships, not from the space's conversations.
    const text = texts[0]!;
    const space = Number(/"w"\."id" = \$(\d+)/.exec(text)?.[1]);
    const count = new Set(text.match(/\$\d+/g)).size;
    const params = Array.from({ length: count }, (_, i) =>
      i + 1 === space ? DIRECT_SPACE_ID : 'plan-a1',
    );
    const plan = await genericPlan('subscription', text, params);
    expect(plan.filter((n) => n.startsWith('Seq Scan'))).toEqual([]);
  });

  it('starts a keyset page at its cursor in the index, not at the head of the list', async () => {
    await client.query(`insert into audit_log (id, kind, action, "actorId", target, "createdAt")
      select 'plan-l' || lpad(g::text, 6, '0'), 'instance', 'plan', 'plan-a1', 'x', g
      from generate_series(1, 20000) g`);
    await client.query('analyze audit_log');
    // Half-way down, walking to older rows: the page of every list served by keysetSlice.
    const page = keysetSlice(
      t.ctx.db.kysely.selectFrom('audit_log').select('id'),
      { at: 'createdAt', key: 'id' },
      'desc',
      { after: { at: 10_000, id: 'plan-l010000' } },
      31,
    ).compile();
    const res = await client.query(`explain (analyze, format json) ${page.sql}`, [
      ...page.parameters,
    ]);
    interface Analyzed {
      'Node Type': string;
      'Index Cond'?: string;
      'Rows Removed by Filter'?: number;
      'Actual Rows': number;
      Plans?: Analyzed[];
    }
    const nodes: Analyzed[] = [];
    const walk = (n: Analyzed) => {
      nodes.push(n);
      n.Plans?.forEach(walk);
    };
    walk((res.rows[0]['QUERY PLAN'] as Array<{ Plan: Analyzed }>)[0]!.Plan);
    const scan = nodes.find((n) => n['Node Type'].startsWith('Index'));
    expect(scan?.['Index Cond'], JSON.stringify(nodes)).toMatch(/"createdAt" <=/);
    // The 10,000 newer rows are never read: the or-form alone read them and threw them away.
    expect(scan!['Rows Removed by Filter'] ?? 0).toBeLessThan(100);
    expect(scan!['Actual Rows']).toBe(31);
  });
});
