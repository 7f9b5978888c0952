import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { HOUR_MS, ManualClock } from '../../src/lib/clock.js';
import { createTestApp, type Agent, type TestApp } from '../_util/app.js';
import { DEFAULT_PASSWORD, signIn, signUpAndIn } from '../_util/seed.js';
import { startSmtp } from '../_util/smtp.js';

import { expectCode, ok } from './_helpers.js';

const REQUEST = 'mutation($l: String!) { requestPasswordReset(input: { emailOrUsername: $l }) }';
const RESET =
  'mutation($t: String!, $p: String!) { resetPassword(input: { token: $t, newPassword: $p }) }';

/** Waits until `n` messages arrived (mail goes out after the mutation answers). */
async function waitForMessages(messages: unknown[], n: number): Promise<void> {
  for (let i = 0; i < 200 && messages.length < n; i++) {
    await new Promise((r) => setTimeout(r, 25));
  }
  expect(messages).toHaveLength(n);
}

const tokenIn = (text: string) => /Reset token: ([A-Za-z0-9_-]{43})/.exec(text)?.[1];

describe('password reset over SMTP', () => {
  let smtp: Awaited<ReturnType<typeof startSmtp>>;
  let t: TestApp;
  let alice: Agent;
  const clock = new ManualClock(Date.parse('2030-01-01T00:00:00Z'));

  beforeAll(async () => {
    smtp = await startSmtp();
    t = await createTestApp({
      clock,
      env: {
        SVC_SMTP_HOST: '127.0.0.1',
        SVC_SMTP_PORT: String(smtp.port),
        SVC_SMTP_FROM: 'svc <noreply@example.org>',
        SVC_PUBLIC_BASE_URL: 'https://chat.example.org',
      },
    });
    alice = await signUpAndIn(t, { username: 'alice', email: 'Alice@Example.org' });
    await signUpAndIn(t, { username: 'nomail' });
  });
  afterAll(async () => {
    await t?.close();
    await smtp?.close();
  });

  it('answers alike whether or not the account exists, and mails only a real one', async () => {
    const info = ok(await t.gql('{ serverInfo { features { key state } } }')).serverInfo;
    expect(info.features.find((f: { key: string }) => f.key === 'email').state).toBe('ENABLED');
    for (const l of ['nobody', 'nobody@example.org', 'nomail', 'alice@example.org']) {
      const res = await t.gql(REQUEST, { l });
      expect(ok(res).requestPasswordReset).toBe(true);
    }
    await waitForMessages(smtp.messages, 1);
    const [mail] = smtp.messages;
    expect(mail!.to.map((a) => a.toLowerCase())).toEqual(['alice@example.org']);
    expect(mail!.raw).toMatch(/^To: Alice@example\.org/im);
    expect(mail!.from).toBe('noreply@example.org');
    expect(mail!.raw).toMatch(/^Subject: Reset your password/m);
    expect(mail!.raw).toContain('https://chat.example.org/reset-password?token=');
    expect(tokenIn(mail!.raw)).toBeDefined();
  });

  it('sets the new password once, ends every session, and refuses a replay', async () => {
    const token = tokenIn(smtp.messages[0]!.raw)!;
    const other = await signIn(t, 'alice');
    expectCode(await t.gql(RESET, { t: token, p: 'short' }), 'VALIDATION');
    const common = await t.gql(RESET, { t: token, p: 'Password123' });
    expectCode(common, 'VALIDATION');
    expect(common.body.errors?.[0]?.message).toMatch(/one of the most common passwords/);
    expect(ok(await t.gql(RESET, { t: token, p: 'a brand new password' })).resetPassword).toBe(
      true,
    );
    for (const agent of [alice, other]) {
      expectCode(await t.gql('{ me { id } }', {}, agent), 'UNAUTHENTICATED');
    }
    const reasons = await t.ctx.db.kysely
      .selectFrom('session')
      .select('endReason')
      .where('accountId', '=', alice.id)
      .execute();
    expect(new Set(reasons.map((r) => r.endReason))).toEqual(new Set(['password_reset']));
    await expect(signIn(t, 'alice', DEFAULT_PASSWORD)).rejects.toThrow(/UNAUTHENTICATED/);
    alice = await signIn(t, 'alice', 'a brand new password');
    expectCode(await t.gql(RESET, { t: token, p: 'yet another password' }), 'INVALID_TOKEN');
    expectCode(await t.gql(RESET, { t: 'made-up', p: 'yet another password' }), 'INVALID_TOKEN');
    expectCode(
      await t.gql(RESET, { t: 'x'.repeat(5000), p: 'yet another password' }),
      'INVALID_TOKEN',
    );
    // The token is stored only as a hash.
    const rows = await t.ctx.db.kysely.selectFrom('password_reset').selectAll().execute();
    expect(JSON.stringify(rows)).not.toContain(token);
  });

  it('expires a token after an hour and spends older ones with a reset', async () => {
    ok(await t.gql(REQUEST, { l: 'alice' }));
    await waitForMessages(smtp.messages, 2);
    const stale = tokenIn(smtp.messages[1]!.raw)!;
    clock.advance(HOUR_MS);
    expectCode(await t.gql(RESET, { t: stale, p: 'too late password' }), 'EXPIRED_TOKEN');

    ok(await t.gql(REQUEST, { l: 'ALICE' }));
    ok(await t.gql(REQUEST, { l: 'alice@EXAMPLE.org' }));
    await waitForMessages(smtp.messages, 4);
    const [first, second] = smtp.messages.slice(2).map((m) => tokenIn(m.raw)!);
    ok(await t.gql(RESET, { t: second!, p: 'the second password' }));
    expectCode(await t.gql(RESET, { t: first!, p: 'the first password' }), 'INVALID_TOKEN');
  });

  it('sends at most three mails an hour to one account, answering alike', async () => {
    clock.advance(HOUR_MS);
    for (let i = 0; i < 5; i++)
      expect(ok(await t.gql(REQUEST, { l: 'alice' })).requestPasswordReset).toBe(true);
    await waitForMessages(smtp.messages, 7);
    await new Promise((r) => setTimeout(r, 200));
    expect(smtp.messages).toHaveLength(7);
  });

  it('drops old tokens in the hourly job', async () => {
    const count = async () =>
      (await t.ctx.db.kysely.selectFrom('password_reset').select('id').execute()).length;
    expect(await count()).toBeGreaterThan(0);
    clock.advance(HOUR_MS);
    await t.ctx.scheduler.runOnce('registration-prune');
    expect(await count()).toBeGreaterThan(0);
    clock.advance(24 * HOUR_MS + 1);
    const ran = await t.ctx.scheduler.runOnce('registration-prune');
    expect(ran, JSON.stringify(t.logs.lines.filter((l) => l.msg === 'job failed'))).toBe(true);
    expect(await count()).toBe(0);
  });

  it('needs no session or CSRF header', async () => {
    const res = await t.gql(REQUEST, { l: 'alice' }, { ...alice, csrfToken: 'wrong' });
    expect(ok(res).requestPasswordReset).toBe(true);
  });
});

describe('password reset without SMTP, and disabled', () => {
  let unconfigured: TestApp;
  let disabled: TestApp;
  beforeAll(async () => {
    unconfigured = await createTestApp();
    disabled = await createTestApp({
      env: {
        SVC_FEATURES_DISABLED: 'email',
        SVC_SMTP_HOST: '127.0.0.1',
        SVC_SMTP_FROM: 'noreply@example.org',
      },
    });
    for (const t of [unconfigured, disabled]) {
      await t.ctx.services.accounts.createPasswordAccount({
        username: 'alice',
        password: DEFAULT_PASSWORD,
        email: 'alice@example.org',
      });
    }
  });
  afterAll(async () => {
    await unconfigured?.close();
    await disabled?.close();
  });

  it('logs recipient and subject when SMTP is not configured, and the token works', async () => {
    const t = unconfigured;
    const state = ok(await t.gql('{ serverInfo { features { key state reason } } }'));
    expect(state.serverInfo.features.find((f: { key: string }) => f.key === 'email').state).toBe(
      'UNAVAILABLE',
    );
    expect(ok(await t.gql(REQUEST, { l: 'alice' })).requestPasswordReset).toBe(true);
    let line: Record<string, any> | undefined;
    for (let i = 0; i < 100 && !line; i++) {
      line = t.logs.lines.find((l) => (l.mail as { to?: string } | undefined)?.to);
      if (!line) await new Promise((r) => setTimeout(r, 20));
    }
    expect(line!.mail).toMatchObject({ to: 'alice@example.org', subject: 'Reset your password' });
    // The token, and only the token: the mail's text stays out of the log.
    expect(line!.mail.text).toBeUndefined();
    const token = line!.mail.resetToken as string;
    ok(await t.gql(RESET, { t: token, p: 'from the log file' }));
    await expect(signIn(t, 'alice', 'from the log file')).resolves.toBeDefined();
  });

  it('answers FEATURE_DISABLED while the email feature is disabled', async () => {
    for (const res of [
      await disabled.gql(REQUEST, { l: 'alice' }),
      await disabled.gql(RESET, { t: 'whatever', p: 'whatever password' }),
    ]) {
      expectCode(res, 'FEATURE_DISABLED');
      expect(res.body.errors?.[0]?.extensions?.feature).toBe('email');
    }
    const rows = await disabled.ctx.db.kysely.selectFrom('password_reset').selectAll().execute();
    expect(rows).toHaveLength(0);
  });
});
