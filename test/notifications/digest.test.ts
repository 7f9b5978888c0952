import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { DIRECT_SPACE_ID } from '../../src/db/direct-space.js';
import { ManualClock, MINUTE_MS } from '../../src/lib/clock.js';
import { newId } from '../../src/lib/ids.js';
import { createTestApp, createTestDatabase, type Agent, type TestApp } from '../_util/app.js';
import { signUpAndIn } from '../_util/seed.js';
import { startSmtp, type CapturedMail } from '../_util/smtp.js';
import {
  conversationOf,
  createWorkspace,
  giveDevice,
  inviteAndJoin,
  ok,
  send,
} from '../conversations/_helpers.js';

import { generalOf, settle, UPDATE_SETTINGS } from './_helpers.js';

// Mail digests (docs/notifications.md, "Mail digests") through a real SMTP server.

const clock = new ManualClock(new Date('2026-03-02T09:00:00Z'));
let smtp: Awaited<ReturnType<typeof startSmtp>>;
let t: TestApp;
let olga: Agent, mike: Agent, mary: Agent;
let general: string;

const SMTP_ENV = () => ({
  SVC_SMTP_HOST: '127.0.0.1',
  SVC_SMTP_PORT: String(smtp.port),
  SVC_SMTP_FROM: 'svc@example.org',
  SVC_PUBLIC_BASE_URL: 'https://chat.example.org',
  SVC_NOTIFY_DIGEST_AWAY_MINUTES: '30',
  SVC_NOTIFY_DIGEST_INTERVAL_MINUTES: '120',
});

/** The text of a captured mail: headers unfolded, quoted-printable or base64 body decoded. */
function decode(mail: CapturedMail): { headers: string; body: string } {
  const [head = '', ...rest] = mail.raw.split(/\r?\n\r?\n/);
  const raw = rest.join('\n\n');
  const headers = head.replace(/\r?\n[ \t]+/g, ' ');
  let body = raw;
  if (/content-transfer-encoding: quoted-printable/i.test(headers)) {
    const bytes = raw
      .replace(/=\r?\n/g, '')
      .replace(/=([0-9A-F]{2})/g, (_m, h: string) => String.fromCharCode(parseInt(h, 16)));
    body = Buffer.from(bytes, 'latin1').toString('utf8');
  } else if (/content-transfer-encoding: base64/i.test(headers)) {
    body = Buffer.from(raw.replace(/\s+/g, ''), 'base64').toString('utf8');
  }
  return { headers, body };
}

const mailsTo = (address: string) => smtp.messages.filter((m) => m.to.includes(address));
const runDigest = async (app = t) => {
  await settle(app);
  return app.ctx.services.digests.run();
};

beforeAll(async () => {
  smtp = await startSmtp();
  t = await createTestApp({ clock, env: SMTP_ENV() });
  olga = await signUpAndIn(t, { username: 'olgadig', email: 'olga@example.org' });
  mike = await signUpAndIn(t, { username: 'mikedig', email: 'mike@example.org' });
  mary = await signUpAndIn(t, { username: 'marydig', email: 'mary@example.org' });
  const serverId = (await createWorkspace(t, olga, 'Digest')).id;
  await inviteAndJoin(t, olga, serverId, [mike, mary]);
  general = await generalOf(t, olga, serverId);
});
afterAll(async () => {
  await t?.close();
  await smtp?.close();
});

describe('mail digests', () => {
  it('mail unread notifications once they waited, once each, at most once per interval', async () => {
    await send(t, olga, general, 'please review @mikedig, the release notes are ready');
    expect(await runDigest()).toBe(0);
    expect(mailsTo('mike@example.org')).toHaveLength(0);

    clock.advance(31 * MINUTE_MS);
    // The job itself, as the scheduler runs it (with the job lock on PostgreSQL).
    expect(await t.ctx.scheduler.runOnce('notification-digest')).toBe(true);
    const mails = mailsTo('mike@example.org');
    expect(mails).toHaveLength(1);
    const { headers, body } = decode(mails[0]!);
    expect(headers).toMatch(/subject: 1 unread notification while you were away/i);
    expect(body).toContain('@olgadig mentioned you in #general (Digest)');
    expect(body).toContain('the release notes are ready');
    const link = /https:\/\/chat\.example\.org\/api\/notifications\/unsubscribe\?token=\S+/.exec(
      body,
    )![0];
    expect(headers).toContain(`List-Unsubscribe: <${link}>`);
    expect(headers).toContain('List-Unsubscribe-Post: List-Unsubscribe=One-Click');
    // Nobody else had anything waiting.
    expect(mailsTo('mary@example.org')).toHaveLength(0);

    // Mailed notifications are not mailed again.
    clock.advance(121 * MINUTE_MS);
    expect(await runDigest()).toBe(0);
    // A new one waits for the interval since the last digest.
    await send(t, olga, general, 'and @mikedig one more thing');
    clock.advance(31 * MINUTE_MS);
    expect(await runDigest()).toBe(1);
    expect(decode(mailsTo('mike@example.org')[1]!).body).toContain('one more thing');
    expect(decode(mailsTo('mike@example.org')[1]!).body).not.toContain('release notes');
    await send(t, olga, general, '@mikedig a third');
    clock.advance(31 * MINUTE_MS);
    expect(await runDigest()).toBe(0);
    clock.advance(90 * MINUTE_MS);
    expect(await runDigest()).toBe(1);
  });

  it('skips what was read, people connected now, and people who turned digests off', async () => {
    const before = mailsTo('mary@example.org').length;
    const read = await send(t, olga, general, '@marydig read this one');
    ok(
      await t.gql(
        'mutation($c: ID!, $m: ID!) { markRead(conversationId: $c, messageId: $m) { id } }',
        { c: general, m: read.id },
        mary,
      ),
    );
    clock.advance(31 * MINUTE_MS);
    expect(await runDigest()).toBe(0);

    await send(t, olga, general, '@marydig while connected');
    clock.advance(31 * MINUTE_MS);
    t.ctx.services.presence.connected(mary.id);
    expect(await runDigest()).toBe(0);
    t.ctx.services.presence.disconnected(mary.id);

    ok(await t.gql(UPDATE_SETTINGS, { i: { emailDigests: false } }, mary));
    expect(await runDigest()).toBe(0);
    ok(await t.gql(UPDATE_SETTINGS, { i: { emailDigests: true } }, mary));
    expect(await runDigest()).toBe(1);
    expect(mailsTo('mary@example.org')).toHaveLength(before + 1);
    expect(decode(mailsTo('mary@example.org').at(-1)!).body).toContain('while connected');
  });

  it('never carries the content of an encrypted conversation', async () => {
    await giveDevice(t, olga.id);
    await giveDevice(t, mary.id);
    const conv = (await conversationOf(t, olga, [mary], { encrypted: true })).conversation;
    const message = {
      id: newId(),
      conversationId: conv.id,
      workspaceId: DIRECT_SPACE_ID,
      authorId: olga.id,
      text: null,
      ciphertext: 'c2VjcmV0LWNpcGhlcnRleHQ',
      threadRootId: null,
      forwardedFromId: null,
      createdAt: clock.now().getTime(),
      editedAt: null,
      deletedAt: null,
      deletedBy: null,
      replyCount: 0,
      lastReplyAt: null,
      mentions: null,
    };
    await t.ctx.db.kysely.insertInto('message').values(message).execute();
    t.ctx.services.notifications.messageCreated(message);
    clock.advance(121 * MINUTE_MS);
    expect(await runDigest()).toBe(1);
    const { body } = decode(mailsTo('mary@example.org').at(-1)!);
    expect(body).toContain('@olgadig wrote to you in a direct message');
    expect(body).toContain('(encrypted message)');
    expect(body).not.toContain('c2VjcmV0');
  });

  it('the unsubscribe link works without signing in; a forged one does not', async () => {
    await send(t, olga, general, '@mikedig before unsubscribing');
    clock.advance(121 * MINUTE_MS);
    expect(await runDigest()).toBe(1);
    const body = decode(mailsTo('mike@example.org').at(-1)!).body;
    const url = new URL(
      /https:\/\/chat\.example\.org\/api\/notifications\/unsubscribe\?token=\S+/.exec(body)![0],
    );
    const path = `${url.pathname}${url.search}`;
    const page = await t.inject({ method: 'GET', url: path });
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('<form method="post"');
    // A GET changes nothing (mail scanners follow links).
    const settings = await t.ctx.db.kysely
      .selectFrom('notification_setting')
      .select('emailDigests')
      .where('accountId', '=', mike.id)
      .executeTakeFirst();
    expect(settings?.emailDigests).toBe(1);

    const forged = `${url.pathname}?token=${url.searchParams.get('token')!.slice(0, -2)}xx`;
    expect((await t.inject({ method: 'POST', url: forged })).statusCode).toBe(400);
    const other = url.searchParams
      .get('token')!
      .replace(/^[^.]+/, Buffer.from(mary.id).toString('base64url'));
    expect(
      (await t.inject({ method: 'POST', url: `${url.pathname}?token=${other}` })).statusCode,
    ).toBe(400);

    // RFC 8058 one-click: a form POST of `List-Unsubscribe=One-Click`, no cookie.
    const done = await t.inject({
      method: 'POST',
      url: path,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'List-Unsubscribe=One-Click',
    });
    expect(done.statusCode).toBe(200);
    const after = ok(await t.gql('{ notificationSettings { emailDigests } }', {}, mike));
    expect(after.notificationSettings.emailDigests).toBe(false);
    await send(t, olga, general, '@mikedig after unsubscribing');
    clock.advance(121 * MINUTE_MS);
    const count = mailsTo('mike@example.org').length;
    await runDigest();
    expect(mailsTo('mike@example.org')).toHaveLength(count);
  });

  it('runs once when two servers run the job at once', async () => {
    const database = await createTestDatabase();
    const a = await createTestApp({ clock, database, env: SMTP_ENV() });
    const b = await createTestApp({ clock, database, env: SMTP_ENV() });
    try {
      const x = await signUpAndIn(a, { username: 'xdig', email: 'x@example.org' });
      const y = await signUpAndIn(a, { username: 'ydig', email: 'y@example.org' });
      const ws = (await createWorkspace(a, x, 'Pair')).id;
      await inviteAndJoin(a, x, ws, [y]);
      await send(a, x, await generalOf(a, x, ws), `ping @${y.username}`);
      await settle(a);
      clock.advance(31 * MINUTE_MS);
      await Promise.all([
        a.ctx.scheduler.runOnce('notification-digest'),
        b.ctx.scheduler.runOnce('notification-digest'),
      ]);
      expect(mailsTo('y@example.org')).toHaveLength(1);
    } finally {
      await b.close();
      await a.close();
      await database.drop();
    }
  });
});

describe('mail digests and the email feature', () => {
  it('do not run while email is disabled', async () => {
    const off = await createTestApp({
      clock,
      env: { ...SMTP_ENV(), SVC_FEATURES_DISABLED: 'email' },
    });
    try {
      const x = await signUpAndIn(off, { username: 'xoff', email: 'xoff@example.org' });
      const y = await signUpAndIn(off, { username: 'yoff', email: 'yoff@example.org' });
      const ws = (await createWorkspace(off, x, 'Pair')).id;
      await inviteAndJoin(off, x, ws, [y]);
      await send(off, x, await generalOf(off, x, ws), `ping @${y.username}`);
      clock.advance(31 * MINUTE_MS);
      expect(await runDigest(off)).toBe(0);
      expect(mailsTo('yoff@example.org')).toHaveLength(0);
    } finally {
      await off.close();
    }
  });

  it('are logged while email is unavailable', async () => {
    const logged = await createTestApp({ clock });
    try {
      const x = await signUpAndIn(logged, { username: 'xlog', email: 'xlog@example.org' });
      const y = await signUpAndIn(logged, { username: 'ylog', email: 'ylog@example.org' });
      const ws = (await createWorkspace(logged, x, 'Pair')).id;
      await inviteAndJoin(logged, x, ws, [y]);
      await send(logged, x, await generalOf(logged, x, ws), `ping @${y.username}`);
      clock.advance(61 * MINUTE_MS);
      expect(await runDigest(logged)).toBe(1);
      const line = logged.logs.lines.find(
        (l) => (l.mail as { to?: string } | undefined)?.to === 'ylog@example.org',
      );
      expect(line?.msg).toBe('mail not sent (SMTP is not configured); logged instead');
    } finally {
      await logged.close();
    }
  });
});
