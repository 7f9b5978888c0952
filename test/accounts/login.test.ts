import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { ManualClock, MINUTE_MS } from '../../src/lib/clock.js';
import { createTestApp, type GqlResponse, type TestApp } from '../_util/app.js';
import { DEFAULT_PASSWORD, signUpAndIn } from '../_util/seed.js';

import { expectCode, ok } from './_helpers.js';

const LOGIN = `mutation($u: String!, $p: String!) {
  login(input: { username: $u, password: $p }) { csrfToken expiresAt user { id username email instanceOperator } }
}`;

describe('login', () => {
  let t: TestApp;
  const clock = new ManualClock(Date.parse('2030-01-01T00:00:00Z'));
  beforeAll(async () => {
    t = await createTestApp({ clock, env: { SVC_TRUST_FORWARDED_HEADERS: 'true' } });
    for (const username of ['alice', 'bob', 'carol', 'dave', 'keyonly']) {
      await t.ctx.services.accounts.createPasswordAccount({
        username,
        password: DEFAULT_PASSWORD,
        email: `${username}@example.org`,
      });
    }
    await t.ctx.db.kysely
      .updateTable('account')
      .set({ passwordHash: null })
      .where('usernameKey', '=', 'keyonly')
      .execute();
  });
  afterAll(async () => t?.close());

  let n = 0;
  const from = (address: string) => ({ 'x-forwarded-for': address });
  // Each attempt from a fresh address unless told, so only the rule under test counts.
  const login = (u: unknown, p: unknown, address = `198.51.100.${n++ % 250}`) =>
    t.gql(LOGIN, { u, p }, null, from(address));

  it('signs in by username, ignoring case and compatibility forms', async () => {
    const res = await login('ＡＬＩＣＥ', DEFAULT_PASSWORD);
    expect(ok(res).login.user).toMatchObject({ username: 'alice', email: 'alice@example.org' });
  });

  it('answers an unknown user, a wrong password and a key-only account alike', async () => {
    const answers: GqlResponse[] = [
      await login('nobody-here', DEFAULT_PASSWORD),
      await login('bob', 'wrong password!'),
      await login('keyonly', DEFAULT_PASSWORD),
      await login('bob', ''),
      await login('x'.repeat(100_000), DEFAULT_PASSWORD),
      await login('bob', 'x'.repeat(10_000)),
    ];
    for (const res of answers) {
      expectCode(res, 'UNAUTHENTICATED');
      expect(res.body.errors?.[0]?.message).toBe('wrong username or password');
      expect(res.response.headers['set-cookie']).toBeUndefined();
    }
  });

  it('throttles failures per account, even for a name that does not exist', async () => {
    for (const username of ['carol', 'ghost']) {
      for (let i = 0; i < 10; i++)
        expectCode(await login(username, 'nope nope'), 'UNAUTHENTICATED');
      const locked = await login(username, DEFAULT_PASSWORD);
      expectCode(locked, 'RATE_LIMITED');
      expect(locked.body.errors?.[0]?.extensions?.retryAfterSeconds).toBe(15 * 60);
    }
    clock.advance(5 * MINUTE_MS);
    const later = await login('carol', DEFAULT_PASSWORD);
    expect(later.body.errors?.[0]?.extensions?.retryAfterSeconds).toBe(10 * 60);
    clock.advance(10 * MINUTE_MS);
    ok(await login('carol', DEFAULT_PASSWORD));
    // Other accounts were never affected.
    ok(await login('bob', DEFAULT_PASSWORD));
  });

  it('forgets the failures of an account after a successful sign-in', async () => {
    for (let round = 0; round < 2; round++) {
      for (let i = 0; i < 9; i++) expectCode(await login('dave', 'nope nope'), 'UNAUTHENTICATED');
      ok(await login('dave', DEFAULT_PASSWORD));
    }
  });

  it('throttles failures per address (an IPv6 /64 counts as one)', async () => {
    clock.advance(60 * MINUTE_MS);
    for (let i = 0; i < 50; i++) {
      const address = i % 2 === 0 ? '2001:db8:1:2::a' : '2001:db8:1:2:ffff::b';
      expectCode(await login(`stranger${i}`, 'nope nope', address), 'UNAUTHENTICATED');
    }
    const blocked = await login('alice', DEFAULT_PASSWORD, '2001:db8:1:2::c');
    expectCode(blocked, 'RATE_LIMITED');
    expect(blocked.body.errors?.[0]?.extensions?.retryAfterSeconds).toBeGreaterThan(0);
    ok(await login('alice', DEFAULT_PASSWORD, '2001:db8:1:3::c'));
    clock.advance(15 * MINUTE_MS);
    ok(await login('alice', DEFAULT_PASSWORD, '2001:db8:1:2::c'));
  });

  it('needs no CSRF header and reports the operator flag of the new session', async () => {
    const op = await signUpAndIn(t, { username: 'boss', operator: true });
    const res = await t.gql(LOGIN, { u: 'boss', p: DEFAULT_PASSWORD }, null);
    expect(ok(res).login.user).toMatchObject({ id: op.id, instanceOperator: true });
  });
});
