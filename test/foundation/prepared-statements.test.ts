import { Kysely, PostgresDialect, sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { Db } from '../../src/db/database.js';
import { namedStatements, preparedQuery } from '../../src/db/statements/prepared.js';
import type { Database } from '../../src/db/schema.js';
import { findAccountById } from '../../src/services/accounts/queries.js';
import { findPresenceAudience, findPresenceChoices } from '../../src/services/presence/queries.js';
import { findDeadSessionIds } from '../../src/services/sessions/queries.js';
import { findMember, findWorkspaceSubscription } from '../../src/services/workspaces/queries.js';
import { createTestApp, TEST_DB, type TestApp } from '../_util/app.js';
import { signUpAndIn } from '../_util/seed.js';
import { createWorkspace, ok, recordQueries, send } from '../conversations/_helpers.js';
import { generalOf } from '../notifications/_helpers.js';

// The hot queries run as named prepared statements on PostgreSQL (src/db/statements/prepared.ts): planned
// once per connection, never taking `*` columns, so a migration that adds a column while a
// process runs (a rolling upgrade) does not break the plans that process holds.
describe('prepared statements', () => {
  const pgOnly = new Kysely<Database>({
    dialect: new PostgresDialect({
      pool: {
        connect: () => Promise.reject(new Error('compile only')),
        end: async () => {},
      },
    }),
  });

  it('refuses a prepared query that takes every column with *', () => {
    const star = preparedQuery(1, (db, id: string) =>
      db.selectFrom('account').selectAll().where('id', '=', id),
    );
    expect(() => star.statement(pgOnly, 'x')).toThrow(/must list its columns/);
    const returning = preparedQuery(1, (db, id: string) =>
      db.deleteFrom('session').where('id', '=', id).returningAll(),
    );
    expect(() => returning.statement(pgOnly, 'x')).toThrow(/must list its columns/);
  });

  it('names a listed query by a hash of its text', () => {
    const listed = preparedQuery(1, (db, id: string) =>
      db.selectFrom('account').select(['id', 'username']).where('id', '=', id),
    );
    const { sql: text } = listed.statement(pgOnly, 'x');
    expect(namedStatements.get(text)).toMatch(/^svc_[0-9a-f]{24}$/);
  });
});

describe(`a column added while the process runs (${TEST_DB})`, () => {
  let t: TestApp;
  let db: Db;
  beforeAll(async () => {
    t = await createTestApp({ env: { SVC_DATABASE_POOL_SIZE: '1' } });
    db = t.ctx.db;
  });
  afterAll(async () => t?.close());

  it('leaves the prepared account lookup working, on the same connection', async () => {
    const alice = await signUpAndIn(t);
    const before = await findAccountById(db.kysely, alice.id);
    expect(before?.username).toBe(alice.username);
    await sql`alter table account add column later_addition text`.execute(db.kysely);
    const after = await findAccountById(db.kysely, alice.id);
    expect(after).toEqual(before);
  });

  it.runIf(TEST_DB === 'postgres')(
    'runs the newest page, the membership check and a message by id as named statements',
    async () => {
      const olga = await signUpAndIn(t);
      const { id: serverId } = await createWorkspace(t, olga, 'Named');
      const general = await generalOf(t, olga, serverId);
      const m = await send(t, olga, general, 'first');
      const texts = await recordQueries(async () => {
        ok(
          await t.gql(
            'query($c: ID!) { messages(conversationId: $c) { items { id } } }',
            { c: general },
            olga,
          ),
        );
        ok(
          await t.gql(
            'mutation($c: ID!, $m: ID!) { markRead(conversationId: $c, messageId: $m) { id } }',
            { c: general, m: m.id },
            olga,
          ),
        );
        // Every authorization check of a workspace action reads the caller's membership.
        expect((await findMember(t.ctx.db.kysely, serverId, olga.id))?.role).toBe('owner');
      });
      const reads = texts.filter(
        (s) => /^select .* from "(message|workspace_member)"/.test(s) && !s.includes(' in ('),
      );
      expect(reads.some((s) => s.includes('order by "createdAt" desc'))).toBe(true);
      expect(reads.some((s) => s.includes('"message" where "id" = $1'))).toBe(true);
      expect(reads.some((s) => s.includes('"workspace_member"'))).toBe(true);
      expect(reads.filter((s) => !namedStatements.has(s))).toEqual([]);
    },
  );

  it.runIf(TEST_DB === 'postgres')(
    "runs a socket's reads at upgrade and subscribe as named statements",
    async () => {
      const olga = await signUpAndIn(t);
      const { id: serverId } = await createWorkspace(t, olga, 'Named socket');
      const db = t.ctx.db.kysely;
      const session = await db
        .selectFrom('session')
        .select('id')
        .where('accountId', '=', olga.id)
        .executeTakeFirstOrThrow();
      const texts = await recordQueries(async () => {
        expect(await findDeadSessionIds(db, [session.id], Date.now())).toEqual([]);
        const subscription = await findWorkspaceSubscription(db, serverId, olga.id);
        expect(subscription.access?.role).toBe('owner');
        expect(subscription.conversationIds.length).toBeGreaterThan(0);
        expect((await findPresenceAudience(db, olga.id)).workspaceIds).toEqual([serverId]);
        expect(await findPresenceChoices(db, [olga.id])).toEqual([]);
      });
      // The subscription's workspace, role and conversations: one statement.
      expect(texts.filter((s) => s.includes('from "workspace" as "w"'))).toHaveLength(1);
      expect(texts.filter((s) => !namedStatements.has(s))).toEqual([]);
    },
  );
});
