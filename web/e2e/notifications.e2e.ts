/// <reference lib="dom" />
// Notifications in the web client (issue 43, item 1; docs/notifications.md): mention badges on
// conversations and the inbox (mentions, thread replies, keywords; unread counts, mark read,
// jump to the message); a conversation's level and mute; workspace rules and the mail digest
// switch; and Web Push through the service worker with a push service the test runs on loopback
// (./push-service.ts says how it stands in for the browser's own).
import path from 'node:path';

import Database from 'better-sqlite3';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';

import { checkA11y } from './a11y.js';
import {
  createInviteLink,
  joinByInvite,
  personPage,
  send,
  shot,
  signUpWithWorkspace,
  serveThisFile,
  timeline,
  type Person,
} from './harness.js';
import { LoopbackPushService } from './push-service.js';

let alice: Person;
let bob: Person;
let push: LoopbackPushService;

const inboxButton = (p: Page) => p.getByRole('button', { name: /^Notifications(, \d+ unread)?$/ });
const inbox = (p: Page) => p.getByRole('dialog', { name: 'Notifications' });
const channelLink = (p: Page, name: string) =>
  p
    .getByRole('navigation', { name: /^Conversations in/ })
    .getByRole('link', { name: new RegExp(`^#${name}\\b`) });

async function openChannel(p: Page, name: string): Promise<void> {
  await channelLink(p, name).click();
  await p.getByRole('heading', { name: `#${name}` }).waitFor();
}

async function openNotificationSettings(p: Page): Promise<void> {
  await p.getByRole('button', { name: 'Settings', exact: true }).click();
  await p.getByRole('link', { name: 'Notifications' }).click();
  await p.getByRole('heading', { name: 'Notifications', level: 2 }).waitFor();
}

/** Waits for the answer to a GraphQL operation of that name (a setting saved). */
function saved(p: Page, operation: string): Promise<unknown> {
  return p.waitForResponse((r) => !!r.request().postData()?.includes(operation));
}

async function waitForUnread(p: Page, n: number): Promise<void> {
  const name = n ? `Notifications, ${n} unread` : 'Notifications';
  await p.getByRole('button', { name, exact: true }).waitFor({ timeout: 15_000 });
}

/** The push subscriptions the server keeps for a person (read from its database file). */
function subscriptionsOf(username: string): string[] {
  const db = new Database(path.join(served.server.dataDir, 'svc.sqlite'), { readonly: true });
  try {
    return (
      db
        .prepare(
          `select s.endpoint from push_subscription s join account a on a.id = s.accountId
           where a.username = ?`,
        )
        .all(username) as { endpoint: string }[]
    ).map((r) => r.endpoint);
  } finally {
    db.close();
  }
}

const served = serveThisFile(
  async ({ server, browser }) => {
    push = await LoopbackPushService.start(server.url);
    alice = await personPage(browser, server.url);
    bob = await personPage(browser, server.url);
    await bob.context.grantPermissions(['notifications'], { origin: server.url });
    await push.install(bob.context);
    await push.attach(bob.page);
    await signUpWithWorkspace(alice.page, 'alice', 'Alice', 'Team');
    const link = await createInviteLink(alice.page);
    await joinByInvite(bob.page, link, 'bob', 'Bob');
  },
  {
    env: {
      // The loopback push service below is a private address: allowed for this test only.
      SVC_PUSH_ALLOW_PRIVATE_ENDPOINTS: 'true',
    },
    tearDown: async () => {
      await push?.stop();
    },
  },
);

describe('notifications in the web client', () => {
  it('badges a mention on its channel and in the inbox, and opens the message from there', async () => {
    await openChannel(bob.page, 'random');
    await send(alice.page, 'Standup at ten, @bob please join');
    await expect
      .poll(() => channelLink(bob.page, 'general').getAttribute('aria-label'), { timeout: 15_000 })
      .toMatch(/1 mention/);
    await waitForUnread(bob.page, 1);
    await inboxButton(bob.page).click();
    const item = inbox(bob.page).getByRole('button', { name: /Alice mentioned you in #general/ });
    await item.waitFor();
    await checkA11y(bob.page, 'notifications inbox');
    await shot(bob.page, 'notifications-inbox');
    await item.click();
    await bob.page.getByRole('heading', { name: '#general' }).waitFor();
    await expect
      .poll(() => bob.page.evaluate(() => document.activeElement?.textContent ?? ''))
      .toContain('Standup at ten');
    await waitForUnread(bob.page, 0);
    expect(await channelLink(bob.page, 'general').getAttribute('aria-label')).not.toMatch(
      /mention/,
    );
  });

  it('keeps a mention that arrives while the count is being read', async () => {
    const b = bob.page;
    await openChannel(b, 'random');
    await waitForUnread(b, 0);
    // After the reload the page reads its count; the server answers at once (no unread), and the
    // answer reaches the page only after a mention has arrived live, which it does not hold.
    const isCountRead = (postData: string | null) => !!postData?.includes('UnreadNotifications');
    let release = () => {};
    const released = new Promise<void>((r) => (release = r));
    let held = 0;
    await b.route('**/api', async (route) => {
      if (!isCountRead(route.request().postData()) || held++ > 0) return route.fallback();
      const answer = await route.fetch();
      await released;
      await route.fulfill({ response: answer });
    });
    let answered = 0;
    const countAnswers = (r: { request(): { postData(): string | null } }) => {
      if (isCountRead(r.request().postData())) answered++;
    };
    b.on('response', countAnswers);
    try {
      await b.reload();
      await channelLink(b, 'general').waitFor();
      await expect.poll(() => held).toBe(1);
      await b.getByText('Reconnecting to the server').waitFor({ state: 'hidden' });
      await send(alice.page, 'While you were loading, @bob');
      await expect
        .poll(() => channelLink(b, 'general').getAttribute('aria-label'), { timeout: 15_000 })
        .toMatch(/1 mention/);
      await waitForUnread(b, 1);
      release();
      // The held answer was overtaken by the mention: the page reads the count again.
      await expect.poll(() => answered, { timeout: 15_000 }).toBeGreaterThanOrEqual(2);
      await waitForUnread(b, 1);
    } finally {
      release();
      b.off('response', countAnswers);
      await b.unroute('**/api');
    }
    await openChannel(b, 'general');
    await waitForUnread(b, 0);
  });

  it('lists a reply in a thread and a keyword hit, and marks them all read', async () => {
    await send(bob.page, 'Who wants lunch?');
    await openNotificationSettings(bob.page);
    await bob.page.getByLabel('Keywords', { exact: true }).fill('deploy, rollback');
    const keywords = saved(bob.page, 'UpdateNotificationSettings');
    await bob.page.getByRole('button', { name: 'Save keywords' }).click();
    await keywords;

    const a = alice.page;
    const msg = timeline(a).locator('article.msg', { hasText: 'Who wants lunch?' });
    await msg.hover();
    await msg.getByRole('button', { name: 'Reply in thread' }).click();
    await a.getByRole('log', { name: 'Replies in the thread' }).waitFor();
    await a.locator('#thread-input').fill('Me, at one');
    await a.locator('#thread-input').press('Enter');
    await a.getByRole('log', { name: 'Replies in the thread' }).getByText('Me, at one').waitFor();
    await a.getByRole('button', { name: 'Close thread' }).click();
    await send(a, 'The Deploy starts at noon');

    await waitForUnread(bob.page, 2);
    await inboxButton(bob.page).click();
    const list = inbox(bob.page).getByRole('list', { name: 'Notifications' });
    await list.getByRole('button', { name: /Alice replied in a thread in #general/ }).waitFor();
    await list
      .getByRole('button', { name: /Alice used one of your keywords in #general/ })
      .waitFor();
    await inbox(bob.page).getByRole('button', { name: 'Mark all read' }).click();
    await inbox(bob.page).getByText('Nothing unread.').waitFor();
    await inbox(bob.page).getByText('You are all caught up.').waitFor();
    await waitForUnread(bob.page, 0);
    await bob.page.keyboard.press('Escape');
  });

  it('mutes a channel, and notifies of every message where the level says so', async () => {
    const b = bob.page;
    await b.getByRole('button', { name: /^Team/ }).click();
    await openChannel(b, 'random');
    await b.getByRole('button', { name: 'Conversation notifications', exact: true }).click();
    const dialog = b.getByRole('dialog', { name: 'Notifications for #random' });
    await dialog.getByRole('button', { name: 'Until I unmute' }).click();
    await dialog.getByText('Muted until you unmute.').waitFor();
    await checkA11y(b, 'a conversation’s notification settings');
    await dialog.getByRole('button', { name: 'Done' }).click();
    await expect.poll(() => channelLink(b, 'random').getAttribute('aria-label')).toMatch(/muted/);

    await openChannel(b, 'general');
    await b.getByRole('button', { name: 'Conversation notifications', exact: true }).click();
    const general = b.getByRole('dialog', { name: 'Notifications for #general' });
    const level = saved(b, 'SetNotificationRule');
    await general.getByLabel('Notify me of').selectOption('ALL');
    await level;
    await general.getByRole('button', { name: 'Done' }).click();
    await openNotificationSettings(b);

    const a = alice.page;
    await openChannel(a, 'random');
    await send(a, '@bob are you there in random?');
    await openChannel(a, 'general');
    await send(a, 'Plain words for everyone in general');
    // Only the second notifies: #random is muted, #general tells of every message.
    await waitForUnread(b, 1);
    await inboxButton(b).click();
    const list = inbox(b).getByRole('list', { name: 'Notifications' });
    await list.getByRole('button', { name: /Alice wrote in #general/ }).waitFor();
    expect(await list.getByRole('listitem').count()).toBe(1);
    expect(await channelLink(b, 'random').getAttribute('aria-label')).not.toMatch(/mention/);
    await inbox(b).getByRole('button', { name: 'Mark all read' }).click();
    await waitForUnread(b, 0);
    await b.keyboard.press('Escape');

    // Unmuted again for the push below.
    await b.getByRole('button', { name: /^Team/ }).click();
    await openChannel(b, 'random');
    await b.getByRole('button', { name: 'Conversation notifications (muted)' }).click();
    const unmuted = saved(b, 'SetNotificationRule');
    await b.getByRole('dialog').getByRole('button', { name: 'Unmute' }).click();
    await unmuted;
    await b.getByRole('dialog').getByRole('button', { name: 'Done' }).click();
  });

  it('keeps workspace rules and the mail digest switch', async () => {
    const b = bob.page;
    await openNotificationSettings(b);
    await checkA11y(b, 'notification settings');
    await shot(b, 'notification-settings');
    const digest = b.getByLabel('Mail me a digest of what I missed while away');
    expect(await digest.isChecked()).toBe(true);
    const digestSaved = saved(b, 'UpdateNotificationSettings');
    await digest.uncheck();
    await digestSaved;
    const ruleSaved = saved(b, 'SetNotificationRule');
    await b.getByLabel('Team', { exact: true }).selectOption('NOTHING');
    await ruleSaved;
    await b.reload();
    await b.getByRole('heading', { name: 'Notifications', level: 2 }).waitFor();
    expect(await b.getByLabel('Mail me a digest of what I missed while away').isChecked()).toBe(
      false,
    );
    expect(await b.getByLabel('Team', { exact: true }).inputValue()).toBe('NOTHING');
    const inherit = saved(b, 'SetNotificationRule');
    await b.getByLabel('Team', { exact: true }).selectOption('');
    await inherit;
  });

  it('pushes while away, opens the message on a click, and forgets the browser on sign-out', async () => {
    const b = bob.page;
    // Several loads of the app so far, and no permission asked.
    expect(
      await b.evaluate(() => (window as unknown as { __permissionAsks: number }).__permissionAsks),
    ).toBe(0);
    await openNotificationSettings(b);
    await b.getByRole('button', { name: 'Turn on notifications on this browser' }).click();
    await b.getByText('This browser shows your notifications').waitFor();
    expect(
      await b.evaluate(() => (window as unknown as { __permissionAsks: number }).__permissionAsks),
    ).toBe(1);
    expect(subscriptionsOf('bob')).toEqual([push.endpoint]);

    // Away: no open page, so the server pushes.
    await b.goto('about:blank');
    for (let i = 0; i < 6 && push.received.length === 0; i++) {
      await openChannel(alice.page, 'random');
      await send(alice.page, `@bob the build is red (${i + 1})`);
      await expect
        .poll(() => push.received.length, { timeout: 4_000 })
        .toBeGreaterThan(0)
        .catch(() => undefined);
    }
    const got = push.received[0]!;
    expect(got.vapid).toMatch(/^vapid t=.+, k=.+$/);
    expect(got.payload).toMatchObject({ kind: 'MENTION', title: 'Alice in #random' });
    expect(String(got.payload.body)).toMatch(/^@bob the build is red/);

    await b.goto('/');
    await b.getByRole('heading', { name: '#general' }).waitFor({ timeout: 20_000 });
    const shown = await b.evaluate(async () => {
      const reg = await navigator.serviceWorker.ready;
      return (await reg.getNotifications()).map((n) => ({ title: n.title, body: n.body }));
    });
    expect(shown).toContainEqual({ title: 'Alice in #random', body: got.payload.body });

    // A click on the notification (the event the browser fires, dispatched in the worker).
    const [worker] = bob.context.serviceWorkers();
    await worker!.evaluate(async () => {
      // Worker types are not in this file's library: the few used, by shape.
      const sw = self as unknown as {
        registration: { getNotifications(): Promise<Notification[]> };
        dispatchEvent(e: Event): boolean;
      };
      const NotificationEvent = (
        globalThis as unknown as {
          NotificationEvent: new (type: string, init: { notification: Notification }) => Event;
        }
      ).NotificationEvent;
      const [n] = await sw.registration.getNotifications();
      const e = new NotificationEvent('notificationclick', { notification: n! });
      let done: Promise<unknown> = Promise.resolve();
      // A page-made event may not extend its life: collect the promise the handler hands over.
      Object.defineProperty(e, 'waitUntil', { value: (p: Promise<unknown>) => (done = p) });
      sw.dispatchEvent(e);
      await done;
    });
    await b.getByRole('heading', { name: '#random' }).waitFor();
    await expect
      .poll(() => b.evaluate(() => document.activeElement?.textContent ?? ''))
      .toContain(String(got.payload.body));

    await b.getByRole('button', { name: 'Sign out' }).click();
    await b.getByRole('tab', { name: 'Sign in' }).waitFor();
    expect(subscriptionsOf('bob')).toEqual([]);
    expect(await b.evaluate(() => localStorage.getItem('test-push-unsubscribed'))).toBe('yes');
    expect(alice.problems).toEqual([]);
    expect(bob.problems).toEqual([]);
  });
});
