import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { ManualClock, MINUTE_MS } from '../../src/lib/clock.js';
import { createTestApp, startTestServer, type TestApp } from '../_util/app.js';
import { signUpAndIn } from '../_util/seed.js';
import { createWorkspace, inviteAndJoin, ok, send } from '../conversations/_helpers.js';

import { generalOf, settle } from './_helpers.js';

// Mail logged without SMTP (contract: features, rule 5; issue 40, item 5): recipient and
// subject, plus a password reset's token and nothing else secret; whole bodies only with the
// development switch; links only when SVC_PUBLIC_BASE_URL makes them absolute.

const clock = new ManualClock(new Date('2026-03-02T09:00:00Z'));
const DIGEST_ENV = {
  SVC_NOTIFY_DIGEST_AWAY_MINUTES: '30',
  SVC_NOTIFY_DIGEST_INTERVAL_MINUTES: '120',
};
const LOGGED = 'mail not sent (SMTP is not configured); logged instead';
const REQUEST = 'mutation($l: String!) { requestPasswordReset(input: { emailOrUsername: $l }) }';
const SECRET_TEXT = 'the launch code is swordfish';

let quiet: TestApp, loud: TestApp;

beforeAll(async () => {
  quiet = await createTestApp({ clock, env: DIGEST_ENV });
  loud = await createTestApp({
    clock,
    env: {
      ...DIGEST_ENV,
      SVC_MAIL_LOG_BODIES: 'true',
      SVC_PUBLIC_BASE_URL: 'https://chat.example.org',
    },
  });
});
afterAll(async () => {
  await quiet?.close();
  await loud?.close();
});

const mailLines = (t: TestApp, to: string) =>
  t.logs.lines.filter((l) => l.msg === LOGGED && (l.mail as { to?: string }).to === to);

async function waitForMail(t: TestApp, to: string) {
  for (let i = 0; i < 250 && mailLines(t, to).length === 0; i++) {
    await new Promise((r) => setTimeout(r, 20));
  }
  return mailLines(t, to).at(-1)!.mail as Record<string, unknown>;
}

/** A digest for `y` of a mention by `x` carrying SECRET_TEXT; answers its logged line. */
async function digestLine(t: TestApp, tag: string) {
  const x = await signUpAndIn(t, { username: `x${tag}`, email: `x${tag}@example.org` });
  const y = await signUpAndIn(t, { username: `y${tag}`, email: `y${tag}@example.org` });
  const ws = (await createWorkspace(t, x, `Mail ${tag}`)).id;
  await inviteAndJoin(t, x, ws, [y]);
  await send(t, x, await generalOf(t, x, ws), `@${y.username} ${SECRET_TEXT}`);
  clock.advance(61 * MINUTE_MS);
  await settle(t);
  expect(await t.ctx.services.digests.run()).toBeGreaterThanOrEqual(1);
  return waitForMail(t, `y${tag}@example.org`);
}

describe('mail logged while SMTP is not configured', () => {
  it('a digest: recipient and subject only, no excerpt, link or token', async () => {
    const mail = await digestLine(quiet, 'q');
    expect(Object.keys(mail).sort()).toEqual(['subject', 'to']);
    expect(mail.subject).toMatch(/unread notification/);
    expect(JSON.stringify(quiet.logs.lines)).not.toContain('swordfish');
    expect(JSON.stringify(quiet.logs.lines)).not.toContain('unsubscribe?token');
  });

  it('an invite: recipient and subject, not its token', async () => {
    const owner = await signUpAndIn(quiet, { username: 'invq' });
    const ws = (await createWorkspace(quiet, owner, 'Invites')).id;
    const created = ok(
      await quiet.gql(
        'mutation($i: CreateWorkspaceInviteInput!) { createWorkspaceInvite(input: $i) { token mailed } }',
        { i: { serverId: ws, email: 'guest@example.org' } },
        owner,
      ),
    ).createWorkspaceInvite;
    expect(created.mailed).toBe(true);
    const mail = await waitForMail(quiet, 'guest@example.org');
    expect(Object.keys(mail).sort()).toEqual(['subject', 'to']);
    expect(JSON.stringify(quiet.logs.lines)).not.toContain(created.token);
  });

  it('a password reset: recipient, subject and the reset token, not the text', async () => {
    await signUpAndIn(quiet, { username: 'resetq', email: 'resetq@example.org' });
    expect(ok(await quiet.gql(REQUEST, { l: 'resetq' })).requestPasswordReset).toBe(true);
    const mail = await waitForMail(quiet, 'resetq@example.org');
    expect(Object.keys(mail).sort()).toEqual(['resetToken', 'subject', 'to']);
    expect(mail.resetToken).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it('SVC_MAIL_LOG_BODIES=true logs whole bodies, with links from SVC_PUBLIC_BASE_URL', async () => {
    const mail = await digestLine(loud, 'l');
    expect(mail.text).toContain(SECRET_TEXT);
    expect(mail.text).toContain('Open https://chat.example.org/ to read and reply.');
    expect(mail.text).toMatch(
      /To stop these mails: https:\/\/chat\.example\.org\/api\/notifications\/unsubscribe\?token=/,
    );
    expect((mail.headers as Record<string, string>)['List-Unsubscribe']).toMatch(
      /^<https:\/\/chat\.example\.org\/api\/notifications\/unsubscribe\?token=/,
    );
  });
});

describe('mail links without SVC_PUBLIC_BASE_URL', () => {
  it('a digest carries no relative link and no List-Unsubscribe header', async () => {
    const bare = await createTestApp({
      clock,
      env: { ...DIGEST_ENV, SVC_MAIL_LOG_BODIES: 'true' },
    });
    try {
      const mail = await digestLine(bare, 'b');
      expect(mail.text).toContain('Open the app to read and reply.');
      expect(mail.text).toContain('turn off mail digests in your notification settings');
      expect(mail.text).not.toMatch(/(^|\s)\/api\//);
      expect(mail.headers).toBeUndefined();
      // An invite's mail gives the token instead of a path no mail client can open.
      const owner = await signUpAndIn(bare, { username: 'invb' });
      const ws = (await createWorkspace(bare, owner, 'Bare')).id;
      const created = ok(
        await bare.gql(
          'mutation($i: CreateWorkspaceInviteInput!) { createWorkspaceInvite(input: $i) { token } }',
          { i: { serverId: ws, email: 'bare@example.org' } },
          owner,
        ),
      ).createWorkspaceInvite;
      const invite = await waitForMail(bare, 'bare@example.org');
      expect(invite.text).toContain(`invite token: ${created.token}`);
      expect(invite.text).not.toContain('/invite/');
    } finally {
      await bare.close();
    }
  });

  it('warns at boot, naming the variable, when mail is sent', async () => {
    const smtpEnv = { SVC_SMTP_HOST: '127.0.0.1', SVC_SMTP_FROM: 'svc@example.org' };
    const warned = await startTestServer({ env: smtpEnv });
    try {
      const line = warned.logs.lines.find((l) => l.variable === 'SVC_PUBLIC_BASE_URL');
      expect(line?.level).toBe(40);
      expect(line?.msg).toContain('SVC_PUBLIC_BASE_URL');
    } finally {
      await warned.stop();
    }
    const quietBoot = await startTestServer({
      env: { ...smtpEnv, SVC_PUBLIC_BASE_URL: 'https://chat.example.org' },
    });
    try {
      expect(quietBoot.logs.lines.some((l) => l.variable === 'SVC_PUBLIC_BASE_URL')).toBe(false);
    } finally {
      await quietBoot.stop();
    }
  });
});
