/// <reference lib="dom" />
// Two people in two browser contexts, against a real server process: sign up with device keys
// (proof of work solved in a worker), create a workspace, invite, chat, react, reply in a
// thread, see typing and presence, time one out; plus key and password sign-in, the operator's
// screens, a server restart and a session ended elsewhere. Screenshots go to .ci/out/web-screens.
import type { Browser } from 'playwright-core';
import { describe, expect, it } from 'vitest';

import { checkA11y } from './a11y.js';
import {
  composer,
  createInviteLink,
  createWorkspace,
  joinByInvite,
  personPage,
  send,
  shot,
  signIn,
  signUp,
  serveThisFile,
  timeline,
  type Person,
  type TestServer,
} from './harness.js';

let server: TestServer;
let browser: Browser;
let alice: Person;
let bob: Person;
let inviteLink = '';

serveThisFile(
  async (s) => {
    ({ server, browser } = s);
    server.cli(['account', 'create', 'carol', '--password-stdin'], 'carol-password-1\n');
    server.cli(['operator', 'grant', 'carol']);
    alice = await personPage(browser, server.url);
    bob = await personPage(browser, server.url);
  },
  { env: { SVC_INSTANCE_NOTICE: 'Welcome to the test server.' } },
);

describe('the web client', () => {
  it('is served at / under a strict Content-Security-Policy, index never cached, assets long-cached', async () => {
    const res = await fetch(`${server.url}/`);
    expect(res.status).toBe(200);
    const csp = res.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("connect-src 'self'");
    expect(csp).not.toMatch(/unsafe-inline|unsafe-eval/);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const html = await res.text();
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    const script = /<script[^>]+src="([^"]+)"/.exec(html)?.[1];
    expect(script).toMatch(/^\/assets\/index-[\w-]+\.js$/);
    const asset = await fetch(`${server.url}${script}`, { headers: { 'accept-encoding': 'br' } });
    expect(asset.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(asset.headers.get('content-encoding')).toBe('br');
    // A deep link of the client answers the page too.
    expect((await fetch(`${server.url}/w/x/y`)).status).toBe(200);
  });

  it('signs two people up with device keys and shows the sign-in screen without problems', async () => {
    await alice.page.goto('/');
    await alice.page.getByText('Welcome to the test server.').waitFor();
    await checkA11y(alice.page, 'sign-in screen');
    await shot(alice.page, '01-sign-in');
    await signUp(alice.page, 'alice', 'Alice');
    expect(alice.problems).toEqual([]);
  });

  it('creates a workspace and an invite link', async () => {
    await createWorkspace(alice.page, 'Team');
    inviteLink = await createInviteLink(alice.page);
    expect(inviteLink).toMatch(/\/invite\//);
  });

  it('lets the invited person sign up from the link and join the workspace', async () => {
    await joinByInvite(bob.page, inviteLink, 'bob', 'Bob');
  });

  it('delivers messages live both ways, with mentions', async () => {
    await alice.page.getByRole('heading', { name: '#general' }).waitFor();
    await send(alice.page, 'Hello @bob, welcome!');
    await timeline(bob.page).getByText('Hello @bob, welcome!').waitFor();
    await expect
      .poll(() => bob.page.locator('.mention-me').count(), { timeout: 10_000 })
      .toBeGreaterThan(0);
    await send(bob.page, 'Thanks Alice 👋');
    await timeline(alice.page).getByText('Thanks Alice 👋').waitFor();
    await shot(alice.page, '02-channel');
  });

  it('shows a reaction to the other person', async () => {
    const msg = bob.page.locator('article.msg', { hasText: 'Hello @bob, welcome!' });
    await msg.hover();
    await msg.getByRole('button', { name: 'Add a reaction' }).click();
    await bob.page.getByRole('searchbox', { name: 'Search emoji' }).fill('thumbs');
    await bob.page.keyboard.press('Enter');
    await alice.page.getByRole('button', { name: /👍 1/ }).waitFor();
  });

  it('replies in a thread, and the other side sees the reply count and the reply', async () => {
    const p = alice.page;
    const msg = p.locator('article.msg', { hasText: 'Thanks Alice' });
    await msg.hover();
    // Typed the moment the box appears, before the effects of its first render have run: what
    // was typed must survive them (they once emptied the box, and Enter then sent nothing).
    await p.evaluate(() => {
      const seen = new MutationObserver(() => {
        const box = document.querySelector<HTMLTextAreaElement>('#thread-input');
        if (!box) return;
        seen.disconnect();
        box.value = 'A reply in the thread';
        box.dispatchEvent(new Event('input', { bubbles: true }));
      });
      seen.observe(document.body, { childList: true, subtree: true });
    });
    const repliesRead = p.waitForResponse(
      (r) => !!r.request().postData()?.includes('threadReplies'),
    );
    await msg.getByRole('button', { name: 'Reply in thread' }).click();
    await p.getByRole('complementary', { name: 'Thread' }).waitFor();
    // The thread's first page is asked for by an effect of the same render: once it is in, every
    // effect of that render has run.
    await repliesRead;
    expect(await p.locator('#thread-input').inputValue()).toBe('A reply in the thread');
    await p.locator('#thread-input').press('Enter');
    await p
      .getByRole('log', { name: 'Replies in the thread' })
      .getByText('A reply in the thread')
      .waitFor();
    await shot(p, '03-thread');
    await checkA11y(p, 'conversation with a thread open');
    await bob.page.getByRole('button', { name: /1 reply/ }).click();
    await bob.page
      .getByRole('log', { name: 'Replies in the thread' })
      .getByText('A reply in the thread')
      .waitFor();
    await bob.page.keyboard.press('Escape');
    await p.getByRole('button', { name: 'Close thread' }).click();
  });

  it('shows typing and presence in a direct conversation', async () => {
    const p = bob.page;
    await p.getByRole('button', { name: /^Members \(/ }).click();
    await p
      .getByRole('complementary', { name: 'Members' })
      .getByRole('button', { name: 'Message' })
      .click();
    await p.getByRole('heading', { name: /Alice/ }).waitFor();
    await p.getByRole('img', { name: 'Alice is online' }).waitFor({ timeout: 15_000 });
    await send(p, 'A private word');
    const a = alice.page;
    await a.getByRole('button', { name: /Direct messages, 1 unread/ }).click();
    await a.getByRole('link', { name: /Bob/ }).click();
    await timeline(a).getByText('A private word').waitFor();
    await a.getByRole('img', { name: 'Bob is online' }).waitFor({ timeout: 15_000 });
    // Typing is announced at most every 3 s (client and server): type for longer than that.
    await composer(p).pressSequentially('I am typing this', { delay: 400 });
    await a.getByText('Bob is typing…').waitFor();
    await shot(a, '04-direct-typing');
    await composer(p).press('Enter');
    await timeline(a).getByText('I am typing this').waitFor();
  });

  it('renders right-to-left and CJK text in its own direction', async () => {
    const p = alice.page;
    await send(p, 'مرحبا بكم في الفريق');
    await send(p, '你好，世界。日本語もOK');
    const dir = await timeline(p)
      .locator('.text', { hasText: 'مرحبا' })
      .evaluate((el) => getComputedStyle(el).direction);
    expect(dir).toBe('rtl');
    const ltr = await timeline(p)
      .locator('.text', { hasText: '你好' })
      .evaluate((el) => getComputedStyle(el).direction);
    expect(ltr).toBe('ltr');
    await shot(p, '05-rtl-cjk');
  });

  it('edits the last message with the up arrow and jumps with Ctrl+K', async () => {
    const p = alice.page;
    await composer(p).focus();
    await composer(p).press('ArrowUp');
    await p.getByText('Editing a message').waitFor();
    await composer(p).fill('你好，世界 (edited text)');
    await composer(p).press('Enter');
    await timeline(bob.page).getByText('你好，世界 (edited text)').waitFor();
    await p.keyboard.press('Control+k');
    await p.getByRole('searchbox', { name: 'Conversation name' }).fill('gener');
    await p.keyboard.press('Enter');
    await p.getByRole('heading', { name: '#general' }).waitFor();
    await p.keyboard.press('Control+/');
    await p.getByRole('dialog', { name: 'Keyboard shortcuts' }).waitFor();
    await checkA11y(p, 'shortcut help');
    await p.keyboard.press('Escape');
  });

  it('pins with the keyboard and deletes a message, and the other side sees both', async () => {
    const p = alice.page;
    const msg = timeline(p).locator('article.msg', { hasText: 'Thanks Alice' });
    await msg.click({ position: { x: 8, y: 8 } });
    await p.keyboard.press('p');
    await msg.getByText('pinned').waitFor();
    await p.getByRole('button', { name: 'Pinned' }).click();
    await p
      .getByRole('complementary', { name: 'Pinned messages' })
      .getByText('Thanks Alice')
      .waitFor();
    await p.getByRole('button', { name: 'Close pinned messages' }).click();
    await bob.page.getByRole('button', { name: /^Team/ }).click();
    await bob.page.getByRole('link', { name: /general/ }).click();
    await send(p, 'This one goes away');
    const doomed = timeline(p).locator('article.msg', { hasText: 'This one goes away' });
    await timeline(bob.page).getByText('This one goes away').waitFor();
    await doomed.hover();
    await doomed.getByRole('button', { name: 'Delete' }).click();
    await p
      .getByRole('dialog', { name: 'Delete this message?' })
      .getByRole('button', { name: 'Delete' })
      .click();
    await timeline(bob.page).getByText('This one goes away').waitFor({ state: 'detached' });
    await timeline(bob.page).getByText('This message was deleted.').waitFor();
  });

  it('lets the owner time a member out, and the member is told in words', async () => {
    const a = alice.page;
    await a.getByRole('button', { name: 'Members and moderation' }).click();
    const row = a.getByRole('row', { name: /bob/ });
    await row.getByRole('combobox', { name: /How long to time out/ }).selectOption('60');
    await row.getByRole('button', { name: 'Time out' }).click();
    await row.getByText(/^until /).waitFor();
    await shot(a, '06-moderation');
    await checkA11y(a, 'members and moderation');
    await a.keyboard.press('Escape');
    const b = bob.page;
    await b.getByRole('button', { name: /^Team/ }).click();
    await b.getByText(/You are timed out here until/).waitFor();
    await composer(b).fill('Can I still write?');
    await composer(b).press('Enter');
    await b
      .getByRole('alert')
      .getByText(/You are timed out in this workspace until/)
      .waitFor();
  });

  it('signs out and back in with the device key', async () => {
    const b = bob.page;
    await b.getByRole('button', { name: 'Sign out' }).click();
    await b.getByRole('button', { name: 'Sign in as bob with this device’s key' }).click();
    await b.getByRole('navigation', { name: 'Workspaces' }).waitFor();
  });

  it('adds a second browser to a key account with a code approved on the first', async () => {
    const other = await personPage(browser, server.url);
    const n = other.page;
    await n.goto('/');
    await n.getByRole('button', { name: 'Add this browser to it' }).click();
    await n
      .getByRole('form', { name: 'Add this browser to your account' })
      .getByLabel('Username')
      .fill('bob');
    await n.getByRole('button', { name: 'Ask to add this browser' }).click();
    const code = (await n.locator('.code').textContent())!.trim();
    expect(code).toMatch(/^[A-Z0-9]{4}-[A-Z0-9]{4}$/);
    const b = bob.page;
    await b.getByRole('button', { name: 'Settings' }).click();
    await b.getByRole('link', { name: 'Devices and keys' }).click();
    await b.getByLabel('The code the new device shows').fill(code);
    await b.getByRole('button', { name: 'Approve' }).click();
    await n.getByRole('navigation', { name: 'Workspaces' }).waitFor({ timeout: 20_000 });
    await b.getByText('Download a backup of your identity key').waitFor();
    await checkA11y(b, 'settings, devices and keys');
    await shot(b, '10-settings-devices');
    expect(other.problems).toEqual([]);
    await other.context.close();
  });

  it('shows a reported message to the operator, who signs in with a password', async () => {
    const b = bob.page;
    await b.getByRole('button', { name: /^Team/ }).click();
    await b.getByRole('link', { name: /general/ }).click();
    const msg = b.locator('article.msg', { hasText: 'Hello @bob' });
    await msg.hover();
    await msg.getByRole('button', { name: 'Report' }).click();
    await b.getByRole('radio', { name: 'Spam' }).check();
    // The dialog's own button: the message's Report button stays while the pointer is on it.
    await b.getByRole('dialog').getByRole('button', { name: 'Report', exact: true }).click();
    await b.getByText('Thank you.').waitFor();

    const carol = await personPage(browser, server.url);
    const c = carol.page;
    await c.goto('/');
    await c.getByLabel('Username').fill('carol');
    await c.getByLabel('Password').fill('wrong-password');
    await c.getByRole('button', { name: 'Sign in' }).click();
    await c
      .getByRole('alert')
      .getByText(/were not accepted/)
      .waitFor();
    await c.getByLabel('Password').fill('carol-password-1');
    await c.getByRole('button', { name: 'Sign in' }).click();
    await c.getByRole('button', { name: 'Server administration' }).click();
    await c.getByText('Hello @bob, welcome!').waitFor();
    await c.getByRole('figure').waitFor();
    await shot(c, '07-admin');
    await checkA11y(c, 'server administration');

    // A second session of carol's ends the first: that tab is sent to sign in, in words.
    const other = await personPage(browser, server.url);
    await signIn(other.page, 'carol', 'carol-password-1');
    await other.page.getByRole('button', { name: 'Settings' }).click();
    await other.page.getByRole('link', { name: 'Sessions' }).click();
    await other.page.getByRole('button', { name: 'Sign out every other session' }).click();
    await c
      .getByText('Your session ended. Sign in again to continue.')
      .waitFor({ timeout: 20_000 });
    expect(carol.problems).toEqual([]);
    await carol.context.close();
    await other.context.close();
  });

  it('reconnects after the server restarts and catches up', async () => {
    const a = alice.page;
    await a.getByRole('button', { name: /^Team/ }).click();
    await a.getByRole('link', { name: /general/ }).click();
    await server.stop();
    await a.getByText(/Reconnecting to the server/).waitFor({ timeout: 20_000 });
    await server.boot();
    await a.getByText(/Reconnecting to the server/).waitFor({ state: 'detached', timeout: 40_000 });
    await alice.page.waitForTimeout(500);
    await bob.page.getByRole('link', { name: /general/ }).click();
    await bob.page.getByRole('button', { name: 'Members' }).first().waitFor();
    // Bob is timed out; the owner's message after the restart still reaches him live.
    await send(a, 'Back after the restart');
    await timeline(bob.page).getByText('Back after the restart').waitFor({ timeout: 20_000 });
  });

  it('works at phone width and in the dark theme', async () => {
    const phone = await personPage(browser, server.url, {
      width: 390,
      height: 844,
      colorScheme: 'dark',
    });
    const p = phone.page;
    await signIn(p, 'carol', 'carol-password-1');
    // At phone width the lists are a closed drawer: its button is what shows.
    await p.getByRole('button', { name: 'Show conversations' }).waitFor();
    await p.goto(new URL(inviteLink).pathname);
    await timeline(p).getByText('Back after the restart').waitFor();
    await shot(p, '08-phone-dark');
    await checkA11y(p, 'phone width, dark theme');
    await p.getByRole('button', { name: 'Show conversations' }).click();
    await p.getByRole('link', { name: /random/ }).waitFor();
    await shot(p, '09-phone-drawer');
    expect(phone.problems).toEqual([]);
    await phone.context.close();
    expect(alice.problems).toEqual([]);
    expect(bob.problems).toEqual([]);
  });
});
