import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createTestApp, type TestApp } from '../_util/app.js';
import { signUpAndIn } from '../_util/seed.js';

import { auditRows, cli, codeOf } from './_helpers.js';

const ID = '01890000-0000-7000-8000-000000000000';

/** Every instance moderation root, with arguments that would pass validation. */
const ROOTS: Array<[string, string, Record<string, unknown>?]> = [
  ['instanceReports', '{ instanceReports(openOnly: true) { id } }'],
  ['instancePrincipalBlocks', '{ instancePrincipalBlocks { principalId } }'],
  ['instanceIpBlocks', '{ instanceIpBlocks { cidr } }'],
  ['instanceAuditLog', '{ instanceAuditLog { entries { id } } }'],
  [
    'instanceResolveReport',
    'mutation($id: ID!) { instanceResolveReport(id: $id) { id } }',
    { id: ID },
  ],
  [
    'instanceBlockPrincipal',
    'mutation { instanceBlockPrincipal(principalId: "server:spam.example", reason: "x") { block { principalId } } }',
  ],
  [
    'instanceUnblockPrincipal',
    'mutation { instanceUnblockPrincipal(principalId: "server:spam.example") { principalId } }',
  ],
  ['instanceBlockIp', 'mutation { instanceBlockIp(cidr: "198.51.100.0/24") { cidr } }'],
  ['instanceUnblockIp', 'mutation { instanceUnblockIp(cidr: "198.51.100.0/24") { cidr } }'],
];

describe('instance operators', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => t?.close());

  it.each(ROOTS)(
    '%s answers FORBIDDEN to a non-operator and UNAUTHENTICATED anonymously',
    async (_name, query, vars) => {
      const user = await signUpAndIn(t);
      const res = await t.gql(query, vars, user);
      expect(codeOf(res)).toBe('FORBIDDEN');
      expect(res.body.data).toBeNull();
      const anon = await t.gql(query, vars);
      // Mutations without a session are refused by the CSRF check (no code) or UNAUTHENTICATED.
      expect(anon.body.data ?? null).toBeNull();
      if (!query.startsWith('mutation')) expect(codeOf(anon)).toBe('UNAUTHENTICATED');
    },
  );

  it('lets an operator in, and shuts a revoked one out on their very next request', async () => {
    const op = await signUpAndIn(t, { operator: true });
    const me = await t.gql('{ me { instanceOperator } }', {}, op);
    expect(me.body.data?.me.instanceOperator).toBe(true);
    expect(codeOf(await t.gql('{ instanceIpBlocks { cidr } }', {}, op))).toBeUndefined();

    const revoke = await cli(t, ['operator', 'revoke', op.username]);
    expect(revoke.code).toBe(0);
    expect(revoke.json.instanceOperator).toBe(false);
    expect(codeOf(await t.gql('{ instanceIpBlocks { cidr } }', {}, op))).toBe('FORBIDDEN');
    expect(
      (await t.gql('{ me { instanceOperator } }', {}, op)).body.data?.me.instanceOperator,
    ).toBe(false);
  });

  it('writes one audit row per grant and revoke from the CLI, none when nothing changes', async () => {
    const user = await signUpAndIn(t);
    const before = (await auditRows(t)).length;
    const grant = await cli(t, ['operator', 'grant', user.username]);
    expect(grant.code).toBe(0);
    expect(grant.json.instanceOperator).toBe(true);
    const again = await cli(t, ['operator', 'grant', user.username]);
    expect(again.code).toBe(0);
    const revoke = await cli(t, ['operator', 'revoke', user.username]);
    expect(revoke.code).toBe(0);
    const rows = (await auditRows(t)).slice(before);
    expect(rows.map((r) => [r.action, r.actorId, r.target, r.kind])).toEqual([
      ['operator.grant', 'cli', `user:${user.id}`, 'moderation'],
      ['operator.revoke', 'cli', `user:${user.id}`, 'moderation'],
    ]);
    const line = grant.logLines.find((l) => l.msg === 'audit');
    expect(line).toMatchObject({
      action: 'operator.grant',
      actor_id: 'cli',
      target: `user:${user.id}`,
    });
  });

  it('refuses to grant the role to a blocked account', async () => {
    const user = await signUpAndIn(t);
    expect((await cli(t, ['principal', 'block', `user:${user.id}`])).code).toBe(0);
    const grant = await cli(t, ['operator', 'grant', user.username]);
    expect(grant.code).toBe(1);
    expect(grant.err).toMatch(/blocked account cannot be made an operator.*\(VALIDATION\)/);
    const row = await t.ctx.db.kysely
      .selectFrom('account')
      .select('isOperator')
      .where('id', '=', user.id)
      .executeTakeFirstOrThrow();
    expect(row.isOperator).toBe(0);
    // A key identity block covers the account too.
    const other = await signUpAndIn(t);
    await t.ctx.db.kysely
      .updateTable('account')
      .set({ keyIdentityId: 'kid_blockedkeyidentity00' })
      .where('id', '=', other.id)
      .execute();
    expect((await cli(t, ['principal', 'block', 'key:kid_blockedkeyidentity00'])).code).toBe(0);
    expect((await cli(t, ['operator', 'grant', other.username])).code).toBe(1);
  });

  it('refuses to grant the role to an account scheduled for deletion', async () => {
    const user = await signUpAndIn(t);
    await t.ctx.db.kysely
      .updateTable('account')
      .set({ deletionRequestedAt: Date.now(), deletionScheduledFor: Date.now() + 86_400_000 })
      .where('id', '=', user.id)
      .execute();
    const grant = await cli(t, ['operator', 'grant', user.username]);
    expect(grant.code).toBe(1);
    expect(grant.err).toMatch(/scheduled for deletion.*\(VALIDATION\)/);
  });

  it('answers NOT_FOUND for an unknown username', async () => {
    const grant = await cli(t, ['operator', 'grant', 'nobody-here']);
    expect(grant.code).toBe(1);
    expect(grant.err).toMatch(/NOT_FOUND/);
  });
});
