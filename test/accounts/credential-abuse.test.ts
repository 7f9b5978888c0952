import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { DAY_MS, ManualClock, MINUTE_MS } from '../../src/lib/clock.js';
import { createTestApp, type TestApp } from '../_util/app.js';
import { DEFAULT_PASSWORD, signIn, signUpAndIn } from '../_util/seed.js';
import { cli as cliWithInput } from '../cli/cli-io.js';
import { cli } from '../moderation/_helpers.js';

import { CREATE_INVITE, SIGNUP, expectCode, ok } from './_helpers.js';

// docs/security.md, "Credential abuse": the daily per-account sign-in rule, the list of common
// passwords, and the operator's view of any account's sessions.

const LOGIN = `mutation($u: String!, $p: String!) { login(input: { username: $u, password: $p }) { csrfToken } }`;
const CHANGE = `mutation($c: String!, $n: String!) {
  changePassword(input: { currentPassword: $c, newPassword: $n })
}`;

let n = 0;
/** Every attempt from a new address: credential stuffing spread over many addresses. */
const fresh = () => ({ 'x-forwarded-for': `203.0.113.${n++ % 250}` });

describe('SVC_RATE_LOGIN_FAILURES_PER_DAY_PER_ACCOUNT', () => {
  let t: TestApp;
  let off: TestApp;
  const clock = new ManualClock(Date.parse('2030-01-01T00:00:00Z'));
  beforeAll(async () => {
    const env = { SVC_TRUST_FORWARDED_HEADERS: 'true' };
    t = await createTestApp({
      clock,
      env: { ...env, SVC_RATE_LOGIN_FAILURES_PER_DAY_PER_ACCOUNT: '20' },
    });
    off = await createTestApp({ clock, env });
    for (const app of [t, off]) {
      for (const username of ['victim', 'other']) {
        await app.ctx.services.accounts.createPasswordAccount({
          username,
          password: DEFAULT_PASSWORD,
        });
      }
    }
  });
  afterAll(async () => {
    await t?.close();
    await off?.close();
  });

  /** Nine failures (under the 15-minute rule), then the window passes. */
  const slowRound = async (app: TestApp, username: string) => {
    for (let i = 0; i < 9; i++) {
      expectCode(
        await app.gql(LOGIN, { u: username, p: 'not it at all' }, null, fresh()),
        'UNAUTHENTICATED',
      );
    }
    clock.advance(16 * MINUTE_MS);
  };

  it('locks an account after that many failures in a day, from any addresses', async () => {
    const session = await signIn(t, 'victim');
    const start = clock.now().getTime();
    await slowRound(t, 'victim');
    await slowRound(t, 'victim');
    for (let i = 0; i < 2; i++) {
      expectCode(
        await t.gql(LOGIN, { u: 'victim', p: 'not it at all' }, null, fresh()),
        'UNAUTHENTICATED',
      );
    }
    // Twenty failures: even the right password now waits, with the time left in the day.
    const locked = await t.gql(LOGIN, { u: 'victim', p: DEFAULT_PASSWORD }, null, fresh());
    expectCode(locked, 'RATE_LIMITED');
    const wait = locked.body.errors?.[0]?.extensions?.retryAfterSeconds as number;
    expect(wait).toBe(Math.ceil((start + DAY_MS - clock.now().getTime()) / 1000));
    expect(locked.body.errors?.[0]?.message).toMatch(/too many failed sign-in attempts/);
    // changePassword's check of the current password is held by the same rule.
    expectCode(
      await t.gql(CHANGE, { c: DEFAULT_PASSWORD, n: 'violet kettle umbrella' }, session),
      'RATE_LIMITED',
    );
    // Other accounts are untouched; the day passes and the account signs in again.
    ok(await t.gql(LOGIN, { u: 'other', p: DEFAULT_PASSWORD }, null, fresh()));
    clock.advance(wait * 1000);
    ok(await t.gql(LOGIN, { u: 'victim', p: DEFAULT_PASSWORD }, null, fresh()));
  });

  it('counts an account that does not exist alike', async () => {
    for (let r = 0; r < 2; r++) await slowRound(t, 'ghost');
    for (let i = 0; i < 2; i++) await t.gql(LOGIN, { u: 'ghost', p: 'x-x-x-x-x' }, null, fresh());
    expectCode(await t.gql(LOGIN, { u: 'ghost', p: 'x-x-x-x-x' }, null, fresh()), 'RATE_LIMITED');
  });

  it('forgets the day after a successful sign-in', async () => {
    await slowRound(t, 'other');
    await slowRound(t, 'other');
    ok(await t.gql(LOGIN, { u: 'other', p: DEFAULT_PASSWORD }, null, fresh()));
    for (let i = 0; i < 5; i++) {
      expectCode(
        await t.gql(LOGIN, { u: 'other', p: 'not it at all' }, null, fresh()),
        'UNAUTHENTICATED',
      );
    }
    ok(await t.gql(LOGIN, { u: 'other', p: DEFAULT_PASSWORD }, null, fresh()));
  });

  it('is off unless set: slow failures never lock the account', async () => {
    for (let r = 0; r < 4; r++) await slowRound(off, 'victim');
    ok(await off.gql(LOGIN, { u: 'victim', p: DEFAULT_PASSWORD }, null, fresh()));
  });
});

describe('common passwords and operator sessions', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ env: { SVC_SIGNUP_REQUIRE_KEYS: 'false' } });
  });
  afterAll(async () => t?.close());

  it('refuses a common password at signup and change with VALIDATION in words', async () => {
    const operator = await signUpAndIn(t, { username: 'oper', operator: true });
    const token = ok(await t.gql(CREATE_INVITE, {}, operator)).createInstanceInvite.token as string;
    for (const password of ['password123', 'Qwerty123', 'ｉｌｏｖｅｙｏｕ']) {
      const res = await t.gql(SIGNUP, {
        input: { username: 'newbie', password, inviteToken: token },
      });
      expectCode(res, 'VALIDATION');
      expect(res.body.errors?.[0]?.message).toMatch(/one of the most common passwords/);
    }
    // The invite was not spent by the refusals.
    ok(
      await t.gql(SIGNUP, {
        input: { username: 'newbie', password: 'violet kettle umbrella', inviteToken: token },
      }),
    );

    const res = await t.gql(CHANGE, { c: DEFAULT_PASSWORD, n: 'letmein1' }, operator);
    expectCode(res, 'VALIDATION');
    expect(res.body.errors?.[0]?.message).toMatch(/one of the most common passwords/);
    // The CLI's account creation applies the same rule.
    const run = await cliWithInput(
      ['account', 'create', 'weakling', '--password-stdin'],
      { ...t.database.env, SVC_LOG_LEVEL: 'warn' },
      'Password1\n',
    );
    expect(run.code).toBe(1);
    expect(run.err).toMatch(/one of the most common passwords/);
  });

  it('lets the operator CLI list and end the sessions of any account', async () => {
    const alice = await signUpAndIn(t, { username: 'alice' });
    const second = await signIn(t, 'alice');
    const listed = await cli(t, ['session', 'list', 'alice']);
    expect(listed.code).toBe(0);
    expect(listed.json.account).toMatchObject({ id: alice.id, username: 'alice' });
    const ids = (listed.json.sessions as Array<{ id: string; createdAt: string }>).map((s) => s.id);
    expect(ids).toHaveLength(2);
    // No token or CSRF secret is printed.
    expect(JSON.stringify(listed.json)).not.toContain(alice.cookies.svc_session);

    const one = await cli(t, ['session', 'end', 'alice', '--session', ids[0]!]);
    expect(one.json).toEqual({ ended: 1 });
    const unknown = await cli(t, ['session', 'end', 'alice', '--session', ids[0]!]);
    expect(unknown.code).toBe(1);
    expect(unknown.err).toMatch(/NOT_FOUND/);

    expect((await cli(t, ['session', 'end', 'alice'])).json).toEqual({ ended: 1 });
    for (const agent of [alice, second]) {
      expectCode(await t.gql('{ me { id } }', {}, agent), 'UNAUTHENTICATED');
    }
    const audit = await cli(t, ['audit', 'list']);
    const actions = (audit.json.entries as Array<{ action: string; target: string }>).filter(
      (e) => e.action === 'sessions.end',
    );
    expect(actions).toHaveLength(2);
    expect(actions[0]!.target).toBe(`user:${alice.id}`);
    expect((await cli(t, ['session', 'list', 'nobody'])).code).toBe(1);
  });
});
