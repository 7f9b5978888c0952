import { createHash } from 'node:crypto';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { DAY_MS, HOUR_MS, ManualClock, MINUTE_MS } from '../../src/lib/clock.js';
import { createTestApp, setCookies, type Agent, type TestApp } from '../_util/app.js';
import { DEFAULT_PASSWORD, signIn, signUpAndIn } from '../_util/seed.js';
import { createWorkspace, inviteAndJoin } from '../workspaces/_helpers.js';

import { expectCode, ok } from './_helpers.js';

const LOGIN = `mutation($u: String!, $p: String!) {
  login(input: { username: $u, password: $p }) { csrfToken expiresAt }
}`;

describe('the session cookie', () => {
  it('is HttpOnly, SameSite=Lax, Path=/, with Max-Age from SVC_SESSION_TTL_DAYS', async () => {
    const t = await createTestApp({ env: { SVC_SESSION_TTL_DAYS: '7' } });
    try {
      await t.ctx.services.accounts.createPasswordAccount({
        username: 'cookie',
        password: DEFAULT_PASSWORD,
      });
      const res = await t.gql(LOGIN, { u: 'cookie', p: DEFAULT_PASSWORD });
      const c = setCookies(res.response);
      expect(c.svc_session).toMatchObject({
        httpOnly: true,
        sameSite: 'Lax',
        path: '/',
        maxAge: 7 * 86400,
      });
      expect(c.svc_session!.secure).toBeFalsy();
      expect(c.svc_csrf).toMatchObject({ sameSite: 'Lax', path: '/', maxAge: 7 * 86400 });
      expect(c.svc_csrf!.httpOnly).toBeFalsy();
      expect(c.svc_csrf!.value).toBe(ok(res).login.csrfToken);
      // A proxy that is not trusted cannot ask for Secure.
      const viaProxy = await t.gql(LOGIN, { u: 'cookie', p: DEFAULT_PASSWORD }, null, {
        'x-forwarded-proto': 'https',
      });
      expect(setCookies(viaProxy.response).svc_session!.secure).toBeFalsy();
    } finally {
      await t.close();
    }
  });

  it('is Secure when forced, or when a trusted proxy reports https', async () => {
    const forced = await createTestApp({ env: { SVC_FORCE_SECURE_COOKIES: 'true' } });
    const proxied = await createTestApp({ env: { SVC_TRUST_FORWARDED_HEADERS: 'true' } });
    try {
      for (const t of [forced, proxied]) {
        await t.ctx.services.accounts.createPasswordAccount({
          username: 'secure',
          password: DEFAULT_PASSWORD,
        });
      }
      const a = setCookies(
        (await forced.gql(LOGIN, { u: 'secure', p: DEFAULT_PASSWORD })).response,
      );
      expect(a.svc_session!.secure).toBe(true);
      expect(a.svc_csrf!.secure).toBe(true);
      const plain = await proxied.gql(LOGIN, { u: 'secure', p: DEFAULT_PASSWORD });
      expect(setCookies(plain.response).svc_session!.secure).toBeFalsy();
      const https = await proxied.gql(LOGIN, { u: 'secure', p: DEFAULT_PASSWORD }, null, {
        'x-forwarded-proto': 'https',
      });
      expect(setCookies(https.response).svc_session!.secure).toBe(true);
      expect(setCookies(https.response).svc_csrf!.secure).toBe(true);
    } finally {
      await forced.close();
      await proxied.close();
    }
  });
});

describe('sessions', () => {
  let t: TestApp;
  const clock = new ManualClock(Date.parse('2030-01-01T00:00:00Z'));
  let alice: Agent;
  const ended: Array<[string[], string]> = [];

  beforeAll(async () => {
    t = await createTestApp({ clock });
    alice = await signUpAndIn(t, { username: 'alice' });
    t.ctx.services.sessions.onEnded((ids, reason) => ended.push([ids, reason]));
  });
  afterAll(async () => t?.close());

  const sessionRow = (token: string) =>
    t.ctx.db.kysely
      .selectFrom('session')
      .selectAll()
      .where('tokenHash', '=', createHash('sha256').update(token).digest('base64url'))
      .executeTakeFirstOrThrow();

  it('stores only a hash of the token', async () => {
    const token = alice.cookies.svc_session!;
    const rows = await t.ctx.db.kysely.selectFrom('session').selectAll().execute();
    expect(JSON.stringify(rows)).not.toContain(token);
    expect(JSON.stringify(rows)).not.toContain(alice.csrfToken);
    const row = await sessionRow(token);
    expect(row.accountId).toBe(alice.id);
  });

  it('lasts SVC_SESSION_TTL_DAYS from sign-in and is not extended by use', async () => {
    const agent = await signIn(t, 'alice');
    const start = clock.now().getTime();
    const row = await sessionRow(agent.cookies.svc_session!);
    expect(row.expiresAt).toBe(start + 30 * DAY_MS);
    clock.advance(30 * DAY_MS - MINUTE_MS);
    ok(await t.gql('{ me { id } }', {}, agent));
    ok(await t.gql('mutation { ping }', {}, agent));
    expect((await sessionRow(agent.cookies.svc_session!)).expiresAt).toBe(start + 30 * DAY_MS);
    clock.advance(MINUTE_MS);
    expectCode(await t.gql('{ me { id } }', {}, agent), 'UNAUTHENTICATED');
    // The expired session is anonymous: a mutation needing a session answers UNAUTHENTICATED.
    expectCode(await t.gql('mutation { logoutOtherSessions }', {}, agent), 'UNAUTHENTICATED');
    alice = await signIn(t, 'alice');
  });

  it('answers UNAUTHENTICATED to anonymous and unknown cookies on session-only fields', async () => {
    for (const agent of [
      null,
      { ...alice, cookies: { svc_session: 'garbage' } },
      { ...alice, cookies: { svc_session: 'x'.repeat(5000) } },
    ]) {
      for (const q of ['{ me { id } }', '{ mySessions { id } }', '{ instanceInvites { id } }']) {
        expectCode(await t.gql(q, {}, agent), 'UNAUTHENTICATED');
      }
    }
  });

  it('lists my sessions and marks the current one', async () => {
    const other = await signIn(t, 'alice');
    const list = ok(
      await t.gql(
        '{ mySessions { id current createdAt expiresAt deviceId ip userAgent } }',
        {},
        alice,
      ),
    ).mySessions as Array<{ id: string; current: boolean }>;
    expect(list.filter((s) => s.current)).toHaveLength(1);
    const fromOther = ok(await t.gql('{ mySessions { id current } }', {}, other))
      .mySessions as Array<{
      id: string;
      current: boolean;
    }>;
    expect(fromOther.find((s) => s.current)!.id).not.toBe(list.find((s) => s.current)!.id);
    // Nobody else's sessions are listed.
    const bob = await signUpAndIn(t, { username: 'bob' });
    const bobs = ok(await t.gql('{ mySessions { id } }', {}, bob)).mySessions;
    expect(bobs).toHaveLength(1);
  });

  it('revokeSession ends one of mine and nothing else', async () => {
    const victim = await signIn(t, 'alice');
    const bob = await signIn(t, 'bob');
    const victimId = (await sessionRow(victim.cookies.svc_session!)).id;
    const bobId = (await sessionRow(bob.cookies.svc_session!)).id;
    const revoke = 'mutation($id: ID!) { revokeSession(id: $id) }';
    expectCode(await t.gql(revoke, { id: bobId }, alice), 'NOT_FOUND');
    expectCode(await t.gql(revoke, { id: 'nope' }, alice), 'NOT_FOUND');
    // An empty id matches no session; it must not widen to every session of the account.
    expectCode(await t.gql(revoke, { id: '' }, alice), 'NOT_FOUND');
    ok(await t.gql('{ me { id } }', {}, alice));
    ok(await t.gql('{ me { id } }', {}, victim));
    ok(await t.gql('{ me { id } }', {}, bob));
    expect(ok(await t.gql(revoke, { id: victimId }, alice)).revokeSession).toBe(true);
    expectCode(await t.gql('{ me { id } }', {}, victim), 'UNAUTHENTICATED');
    expectCode(await t.gql(revoke, { id: victimId }, alice), 'NOT_FOUND');
    expect(ended.at(-1)).toEqual([[victimId], 'session_revoked']);
  });

  it('logoutOtherSessions ends every other session of the account only', async () => {
    const others = [await signIn(t, 'alice'), await signIn(t, 'alice')];
    const bob = await signIn(t, 'bob');
    const res = await t.gql('mutation { logoutOtherSessions }', {}, alice);
    expect(ok(res).logoutOtherSessions).toBeGreaterThanOrEqual(2);
    for (const o of others) expectCode(await t.gql('{ me { id } }', {}, o), 'UNAUTHENTICATED');
    ok(await t.gql('{ me { id } }', {}, alice));
    ok(await t.gql('{ me { id } }', {}, bob));
    expect(ended.at(-1)![1]).toBe('logout_other_sessions');
    const rows = await t.ctx.db.kysely
      .selectFrom('session')
      .select(['endReason'])
      .where('accountId', '=', alice.id)
      .where('endedAt', 'is not', null)
      .execute();
    expect(rows.map((r) => r.endReason)).toContain('logout_other_sessions');
  });

  it('logout ends the session and clears both cookies', async () => {
    const agent = await signIn(t, 'alice');
    const res = await t.gql('mutation { logout }', {}, agent);
    expect(ok(res).logout).toBe(true);
    const c = setCookies(res.response);
    for (const name of ['svc_session', 'svc_csrf']) {
      expect(c[name]).toMatchObject({ value: '', path: '/', maxAge: 0 });
    }
    expect(c.svc_session!.httpOnly).toBe(true);
    expectCode(await t.gql('{ me { id } }', {}, agent), 'UNAUTHENTICATED');
    expect((await sessionRow(agent.cookies.svc_session!)).endReason).toBe('logout');
    // Again, or without a session: false, and the cookies are cleared all the same.
    const again = await t.gql('mutation { logout }', {}, agent);
    expect(ok(again).logout).toBe(false);
    const anon = await t.gql('mutation { logout }');
    expect(ok(anon).logout).toBe(false);
    expect(setCookies(anon.response).svc_session?.value).toBe('');
  });
});

describe('account mutations and me', () => {
  let t: TestApp;
  let alice: Agent;
  let remote: Agent;
  beforeAll(async () => {
    t = await createTestApp();
    alice = await signUpAndIn(t, { username: 'alice', email: 'alice@example.org' });
    remote = await signUpAndIn(t, { username: 'visitor' });
    await t.ctx.db.kysely
      .updateTable('account')
      .set({ homeServer: 'elsewhere.example' })
      .where('id', '=', remote.id)
      .execute();
  });
  afterAll(async () => t?.close());

  it('me answers the caller with their private fields, and hides them on others', async () => {
    const op = await signUpAndIn(t, { username: 'boss', operator: true });
    const me = ok(
      await t.gql(
        '{ me { id username email deletionScheduledFor probationEndsAt instanceOperator } }',
        {},
        alice,
      ),
    ).me;
    expect(me).toEqual({
      id: alice.id,
      username: 'alice',
      email: 'alice@example.org',
      deletionScheduledFor: null,
      probationEndsAt: null,
      instanceOperator: false,
    });
    expect(ok(await t.gql('{ me { instanceOperator } }', {}, op)).me.instanceOperator).toBe(true);
    // A pending deletion shows on me.
    const when = Date.parse('2031-02-03T04:05:06.000Z');
    await t.ctx.db.kysely
      .updateTable('account')
      .set({ deletionRequestedAt: when - 1, deletionScheduledFor: when })
      .where('id', '=', op.id)
      .execute();
    const pending = ok(await t.gql('{ me { deletionScheduledFor } }', {}, op)).me;
    expect(pending.deletionScheduledFor).toBe(new Date(when).toISOString());
  });

  it('updateProfile sets and clears the display name, refusing bad ones', async () => {
    const set =
      'mutation($n: String) { updateProfile(input: { displayName: $n }) { displayName } }';
    expect(ok(await t.gql(set, { n: '  Alice A.  ' }, alice)).updateProfile.displayName).toBe(
      'Alice A.',
    );
    expectCode(await t.gql(set, { n: 'x'.repeat(65) }, alice), 'VALIDATION');
    expectCode(await t.gql(set, { n: 'evil\u202e' }, alice), 'VALIDATION');
    expect(ok(await t.gql(set, { n: null }, alice)).updateProfile.displayName).toBeNull();
    const untouched = 'mutation { updateProfile(input: {}) { displayName } }';
    expect(ok(await t.gql(untouched, {}, alice)).updateProfile.displayName).toBeNull();
  });

  it('changePassword checks the current one and ends the other sessions', async () => {
    const change = `mutation($c: String!, $n: String!) {
      changePassword(input: { currentPassword: $c, newPassword: $n })
    }`;
    const other = await signIn(t, 'alice');
    expectCode(await t.gql(change, { c: 'wrong!!!!', n: 'a new password' }, alice), 'VALIDATION');
    expectCode(await t.gql(change, { c: DEFAULT_PASSWORD, n: 'short' }, alice), 'VALIDATION');
    ok(await t.gql('{ me { id } }', {}, other));
    expect(
      ok(await t.gql(change, { c: DEFAULT_PASSWORD, n: 'a new password' }, alice)).changePassword,
    ).toBe(true);
    ok(await t.gql('{ me { id } }', {}, alice));
    expectCode(await t.gql('{ me { id } }', {}, other), 'UNAUTHENTICATED');
    await expect(signIn(t, 'alice', DEFAULT_PASSWORD)).rejects.toThrow(/UNAUTHENTICATED/);
    alice = await signIn(t, 'alice', 'a new password');
  });

  it('a person from another server signed in here gets FORBIDDEN on account mutations', async () => {
    ok(await t.gql('{ me { id username } }', {}, remote));
    expectCode(
      await t.gql('mutation { updateProfile(input: { displayName: "Hi" }) { id } }', {}, remote),
      'FORBIDDEN',
    );
    expectCode(
      await t.gql(
        'mutation { changePassword(input: { currentPassword: "correct horse battery staple", newPassword: "another one!" }) }',
        {},
        remote,
      ),
      'FORBIDDEN',
    );
    // The other account mutations: deletion, identity keys and devices.
    const keys = `identityPublicKey: "${'A'.repeat(43)}", challengeId: "c", issuedAt: "2030-01-01T00:00:00Z"`;
    for (const m of [
      'mutation { requestAccountDeletion(input: { confirmUsername: "visitor" }) { scheduledFor } }',
      'mutation { cancelAccountDeletion }',
      `mutation { enrollIdentityKey(input: { ${keys}, devicePublicKey: "${'B'.repeat(43)}", identitySignature: "s", deviceSignature: "s" }) { user { id } } }`,
      `mutation { rotateIdentityKey(input: { ${keys}, newIdentityPublicKey: "${'B'.repeat(43)}", signature: "s", newSignature: "s" }) { id } }`,
      'mutation { revokeDevice(deviceId: "00000000000000000000000000") }',
    ]) {
      expectCode(await t.gql(m, {}, remote), 'FORBIDDEN');
    }
    // Nothing changed.
    await expect(signIn(t, 'visitor')).resolves.toBeDefined();
  });
});

describe('me-only fields on another user', () => {
  it('are null (false for instanceOperator) on every user but the caller', async () => {
    const clock = new ManualClock(Date.parse('2030-03-01T00:00:00Z'));
    const t = await createTestApp({ clock, env: { SVC_PROBATION_HOURS: '2' } });
    try {
      const boss = await signUpAndIn(t, { email: 'boss@example.org', operator: true });
      clock.advance(3 * HOUR_MS);
      const ws = await createWorkspace(t, boss, 'Visible');
      // carol is new (on probation); boss has a pending deletion, an email and the operator role.
      const carol = await signUpAndIn(t, { email: 'carol@example.org' });
      ok(
        await t.gql(
          'mutation($u: String!) { requestAccountDeletion(input: { confirmUsername: $u }) { scheduledFor } }',
          { u: boss.username },
          boss,
        ),
      );
      // (The request comes first: an owner of a workspace with other members may not make one.)
      await inviteAndJoin(t, boss, ws.id, [carol]);
      const FIELDS = 'id email deletionScheduledFor probationEndsAt instanceOperator';
      const members = async (agent: Agent) =>
        ok(
          await t.gql(
            `query($s: ID!) { workspace(serverId: $s) { members { items { user { ${FIELDS} } } } } }`,
            { s: ws.id },
            agent,
          ),
        ).workspace.members.items.map((m: { user: Record<string, unknown> }) => m.user) as Array<
          Record<string, unknown>
        >;
      const hidden = { email: null, deletionScheduledFor: null, probationEndsAt: null };
      const seenByCarol = await members(carol);
      expect(seenByCarol.find((u) => u.id === boss.id)).toEqual({
        id: boss.id,
        ...hidden,
        instanceOperator: false,
      });
      expect(seenByCarol.find((u) => u.id === carol.id)).toMatchObject({
        email: 'carol@example.org',
        probationEndsAt: expect.any(String),
      });
      const seenByBoss = await members(boss);
      expect(seenByBoss.find((u) => u.id === carol.id)).toEqual({
        id: carol.id,
        ...hidden,
        instanceOperator: false,
      });
      expect(seenByBoss.find((u) => u.id === boss.id)).toMatchObject({
        email: 'boss@example.org',
        deletionScheduledFor: expect.any(String),
        instanceOperator: true,
      });
    } finally {
      await t.close();
    }
  });
});
