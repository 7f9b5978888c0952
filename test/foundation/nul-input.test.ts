import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createTestApp, type Agent, type TestApp } from '../_util/app.js';
import { signUpAndIn } from '../_util/seed.js';

// U+0000 is refused before anything runs, on both databases alike (PostgreSQL cannot store it
// in text; SQLite could). Variables get VALIDATION; a literal in the document is a GraphQL
// error without a code.
describe('the NUL character in input', () => {
  let t: TestApp;
  let alice: Agent;
  beforeAll(async () => {
    t = await createTestApp();
    alice = await signUpAndIn(t);
  });
  afterAll(async () => t?.close());

  it('answers VALIDATION for NUL anywhere in the variables and runs nothing', async () => {
    const before = await t.ctx.db.kysely.selectFrom('workspace').select('id').execute();
    const res = await t.gql(
      'mutation($i: CreateWorkspaceInput!) { createWorkspace(input: $i) { id } }',
      { i: { name: 'bad\u0000name' } },
      alice,
    );
    expect(res.body.errors?.[0]?.extensions?.code).toBe('VALIDATION');
    expect(res.body.errors?.[0]?.message).toMatch(/NUL/);
    expect(await t.ctx.db.kysely.selectFrom('workspace').select('id').execute()).toHaveLength(
      before.length,
    );
    const login = await t.gql(
      'mutation($u: String!, $p: String!) { login(input: { username: $u, password: $p }) { csrfToken } }',
      { u: 'a\u0000', p: 'whatever password' },
    );
    expect(login.body.errors?.[0]?.extensions?.code).toBe('VALIDATION');
  });

  it('refuses a NUL in a string literal of the document, without a code', async () => {
    const res = await t.gql(
      'mutation { createWorkspace(input: { name: "x\\u0000y" }) { id } }',
      {},
      alice,
    );
    expect(res.body.errors?.[0]?.message).toMatch(/NUL/);
    expect(res.body.errors?.[0]?.extensions?.code).toBeUndefined();
  });

  it('still takes ordinary text', async () => {
    const res = await t.gql(
      'mutation($i: CreateWorkspaceInput!) { createWorkspace(input: $i) { name } }',
      { i: { name: 'ünïcödé ☕' } },
      alice,
    );
    expect(res.body.data?.createWorkspace.name).toBe('ünïcödé ☕');
  });
});
