import { Kysely, PostgresDialect, sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { Db } from '../../src/db/database.js';
import { namedStatements, preparedQuery } from '../../src/db/prepared.js';
import type { Database } from '../../src/db/schema.js';
import { findAccountById } from '../../src/services/accounts/queries.js';
import { createTestApp, TEST_DB, type TestApp } from '../_util/app.js';
import { signUpAndIn } from '../_util/seed.js';

// The hot queries run as named prepared statements on PostgreSQL (src/db/prepared.ts): planned
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
});
