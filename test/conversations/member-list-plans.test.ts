import path from 'node:path';

import Sqlite from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect, sql, type CompiledQuery } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createTestApp, PG_URL, TEST_DB, type TestApp } from '../_util/app.js';
import { DIRECT_SPACE_ID } from '../../src/db/direct-space.js';
import { memberPages, pendingInvitees } from '../../src/services/conversations/member-lists.js';

// A conversation's member list is read in the order people joined (migration 0026,
// docs/decisions.md): on both databases a page of one conversation is a range of
// conversation_member_order_idx in that order, not a sort of every member, and the pending
// invitees of a page of conversations are found through it, not by a scan of the table. The
// plans are asked of a channel of 20,000 members among 29,000 rows, analyzed.
describe('plans of the member lists', () => {
  let t: TestApp;
  let k: Kysely<any>;
  const seen: CompiledQuery[] = [];
  const BIG = 20_000;
  const SMALL = 3_000;
  const smalls = Array.from({ length: 49 }, (_, i) => `pc${i + 2}`);

  beforeAll(async () => {
    t = await createTestApp();
    const log = (e: { query: CompiledQuery }) => void seen.push(e.query);
    if (TEST_DB === 'sqlite') {
      const file = path.join(t.database.env.SVC_DATA_DIR!, 'svc.sqlite');
      k = new Kysely({ dialect: new SqliteDialect({ database: new Sqlite(file) }), log });
    } else {
      const url = new URL(PG_URL);
      url.searchParams.set('options', `-c search_path=${t.database.pgSchema}`);
      k = new Kysely({
        dialect: new PostgresDialect({
          pool: new pg.Pool({ connectionString: url.toString(), max: 1 }),
        }),
        log,
      });
    }
    const series = (n: number) =>
      TEST_DB === 'sqlite'
        ? sql.raw(`(with recursive s(g) as (select 1 union all select g + 1 from s where g < ${n})
            select g from s)`)
        : sql.raw(`(select g from generate_series(1, ${n}) g)`);
    await sql`insert into account (id, username, "usernameKey", "createdAt", "isOperator")
      select 'pa' || g, 'pa' || g, 'pa' || g, 0, 0 from ${series(BIG)} as x`.execute(k);
    await sql`insert into conversation (id, "workspaceId", kind, name, "isPrivate", encrypted,
        "createdBy", "createdAt", "lastActivityAt")
      select 'pc' || g, ${DIRECT_SPACE_ID}, 'group', null, 1, 0, 'pa1', 0, 0
      from ${series(SMALL + 1)} as x`.execute(k);
    // pc1 has every account, one joining a second; the others are groups of three, some of
    // them invited.
    await sql`insert into conversation_member ("conversationId", "accountId", state, "joinedAt")
      select 'pc1', 'pa' || g, 'member', g * 1000 from ${series(BIG)} as x`.execute(k);
    await sql`insert into conversation_member ("conversationId", "accountId", state, "joinedAt")
      select 'pc' || (g / 3 + 2), 'pa' || (g % ${sql.lit(BIG)} + 1),
        case when g % 7 = 0 then 'pending' else 'member' end, g * 10
      from ${series(SMALL * 3 - 1)} as x`.execute(k);
    await sql`analyze`.execute(k);
  }, 300_000);

  afterAll(async () => {
    await k?.destroy();
    await t?.close();
  });

  /** The plan of the last statement `run` made, one line a step. */
  async function planOf(run: () => Promise<unknown>): Promise<string> {
    seen.length = 0;
    await run();
    const q = seen.at(-1)!;
    const prefix = TEST_DB === 'sqlite' ? 'explain query plan ' : 'explain ';
    const plan = await k.executeQuery({ ...q, sql: prefix + q.sql } as CompiledQuery);
    return plan.rows
      .map((r: any) => (TEST_DB === 'sqlite' ? r.detail : r['QUERY PLAN']) as string)
      .join('\n');
  }

  /** A range of the index in the list's order: no sort, no scan of the table. */
  function expectOrderedRange(plan: string) {
    expect(plan).toContain('conversation_member_order_idx');
    expect(plan).not.toMatch(/TEMP B-TREE|Sort|SCAN conversation_member\b|Seq Scan/);
  }

  it('reads a page of one conversation as a range of the index, first page and back', async () => {
    const middle = { at: 15_000_000, id: 'pa15000' };
    const first = await memberPages(k, ['pc1'], { limit: 501 });
    expect(
      first
        .get('pc1')!
        .map((r) => r.accountId)
        .slice(0, 3),
    ).toEqual(['pa1', 'pa2', 'pa3']);
    expectOrderedRange(await planOf(() => memberPages(k, ['pc1'], { limit: 501 })));
    expectOrderedRange(await planOf(() => memberPages(k, ['pc1'], { before: middle, limit: 501 })));
  });

  it('numbers the members of several conversations without sorting each one', async () => {
    const plan = await planOf(() => memberPages(k, ['pc1', ...smalls], { limit: 501 }));
    expect(plan).toContain('conversation_member_order_idx');
    // Only the outer order of the few rows kept; never the members of a conversation.
    expect(plan).not.toMatch(/USE TEMP B-TREE FOR LAST|Sort Key: [^\n]*"joinedAt"/);
  });

  it('finds the pending invitees through the index', async () => {
    const plan = await planOf(() => pendingInvitees(k, ['pc1', ...smalls], 0));
    expect(plan).toContain('conversation_member_order_idx');
    expect(plan).not.toMatch(/SCAN conversation_member\b|Seq Scan/);
  });
});
