/// <reference lib="dom" />
// What trying the app as two new people showed (issue 43, items 6–14), each checked in Chromium
// against a real server: a taken username in words with suggestions, a display name reaching
// the other page live, the app's own confirmation dialog, the skip link only where there is a
// message box, no "New messages" above messages seen live, the header and the message toolbar
// at phone width, and the address back at / after signing out.
import type { Browser, Locator } from 'playwright-core';
import { describe, expect, it } from 'vitest';

import { checkA11y } from './a11y.js';
import {
  composer,
  createInviteLink,
  fillSignUp,
  personPage,
  send,
  shot,
  serveThisFile,
  signUpWithWorkspace,
  timeline,
  type Person,
  type TestServer,
} from './harness.js';

let server: TestServer;
let browser: Browser;
let alice: Person;
let bob: Person;
let inviteLink = '';
const nativeDialogs: string[] = [];

type Box = { x: number; y: number; width: number; height: number };
const overlap = (a: Box, b: Box) =>
  a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;

async function boxes(l: Locator): Promise<Box[]> {
  const out: Box[] = [];
  for (const el of await l.all()) {
    const b = await el.boundingBox();
    if (b && b.width > 0 && b.height > 0) out.push(b);
  }
  return out;
}

/** The box of an element's text as drawn (it may overflow the element's own box). */
function textBox(l: Locator): Promise<Box> {
  return l.evaluate((el) => {
    const r = document.createRange();
    r.selectNodeContents(el);
    const b = r.getBoundingClientRect();
    return { x: b.x, y: b.y, width: b.width, height: b.height };
  });
}

serveThisFile(async (s) => {
  ({ server, browser } = s);
  alice = await personPage(browser, server.url);
  bob = await personPage(browser, server.url);
  for (const who of [alice, bob]) {
    who.page.on('dialog', (d) => {
      nativeDialogs.push(d.message());
      void d.dismiss();
    });
  }
});

describe('what trying the web client showed', () => {
  it('says a taken username is taken and suggests another', async () => {
    const a = alice.page;
    await signUpWithWorkspace(a, 'alice', 'Alice', 'Team');
    inviteLink = await createInviteLink(a);

    const b = bob.page;
    await b.goto(new URL(inviteLink).pathname);
    await fillSignUp(b, 'alice', 'Bob');
    const alert = b.getByRole('alert').filter({ hasText: 'is taken' });
    await alert.waitFor({ timeout: 30_000 });
    const words = (await alert.textContent()) ?? '';
    expect(words).toMatch(/The username "alice" is taken\./);
    expect(words).toMatch(/Choose another username, such as alice\d+ or alice_\d+\./);
    expect(words).not.toMatch(/Reload/);
    await b.getByLabel('Username').fill('bob');
    await b.getByRole('button', { name: 'Create account' }).click();
    await b.getByRole('heading', { name: '#general' }).waitFor({ timeout: 30_000 });
  });

  it('offers the skip link to the message box only where there is one', async () => {
    const b = bob.page;
    await expect.poll(() => b.locator('a.skip').textContent()).toBe('Skip to the message box');
    await b.getByRole('button', { name: 'Settings' }).click();
    await b.getByRole('heading', { name: 'Profile' }).waitFor();
    await b.locator('a.skip').waitFor({ state: 'attached' });
    expect(await b.getByRole('link', { name: 'Skip to the message box' }).count()).toBe(0);
    expect(await b.locator('a.skip').getAttribute('href')).toBe('#main');
  });

  it('shows a new display name on the other person’s open page without a reload', async () => {
    const b = bob.page;
    const a = alice.page;
    // Alice's page meets Bob under his first name.
    await b.getByRole('button', { name: /^Team/ }).click();
    await b.getByRole('link', { name: /general/ }).click();
    await send(b, 'Hello, I am new here');
    await timeline(a).getByText('Hello, I am new here').waitFor();
    const names = () => timeline(a).locator('article.msg .msg-head strong').allTextContents();
    expect(await names()).toContain('Bob');
    await b.getByRole('button', { name: 'Settings' }).click();
    await b.getByLabel('Display name').fill('Roberto Montgomery');
    await b.getByRole('button', { name: 'Save' }).click();
    await b.getByText('Saved.').waitFor();
    await b.getByRole('button', { name: /^Team/ }).click();
    await b.getByRole('link', { name: /general/ }).click();
    await send(b, 'Now with my full name');
    await timeline(a).getByText('Now with my full name').waitFor();
    // The new message and the earlier one both carry the new name.
    await expect.poll(names).toContain('Roberto Montgomery');
    expect(await names()).not.toContain('Bob');
  });

  it('shows no "New messages" line above messages seen live', async () => {
    const a = alice.page;
    const divider = a.getByRole('separator').filter({ hasText: 'New messages' });
    await send(bob.page, 'Seen live, one');
    await send(bob.page, 'Seen live, two');
    await timeline(a).getByText('Seen live, two').waitFor();
    // Their read marker moves while they read, so a reload shows them as read.
    await a.waitForTimeout(500);
    await a.reload();
    await timeline(a).getByText('Seen live, two').waitFor();
    await a.waitForTimeout(500);
    expect(await divider.count()).toBe(0);
    expect(await a.getByRole('link', { name: /general.*unread/ }).count()).toBe(0);
    // And so does going to another channel and back.
    await send(bob.page, 'Seen live, three');
    await timeline(a).getByText('Seen live, three').waitFor();
    await a.getByRole('link', { name: /random/ }).click();
    await a.getByRole('heading', { name: '#random' }).waitFor();
    await a.getByRole('link', { name: /general/ }).click();
    await timeline(a).getByText('Seen live, three').waitFor();
    await a.waitForTimeout(500);
    expect(await divider.count()).toBe(0);
  });

  it('asks before deleting in the app’s own dialog, which Escape cancels', async () => {
    const a = alice.page;
    await send(a, 'Delete me soon');
    const doomed = timeline(a).locator('article.msg', { hasText: 'Delete me soon' });
    await doomed.hover();
    await doomed.getByRole('button', { name: 'Delete' }).click();
    const ask = a.getByRole('dialog', { name: 'Delete this message?' });
    await ask.waitFor();
    await expect.poll(() => a.evaluate(() => document.activeElement?.textContent)).toBe('Cancel');
    await checkA11y(a, 'confirmation dialog');
    await shot(a, '20-confirm-delete');
    await a.keyboard.press('Escape');
    await ask.waitFor({ state: 'detached' });
    await doomed.waitFor();
    await doomed.hover();
    await doomed.getByRole('button', { name: 'Delete' }).click();
    await ask.getByRole('button', { name: 'Delete' }).click();
    await timeline(bob.page).getByText('Delete me soon').waitFor({ state: 'detached' });
    await doomed.waitFor({ state: 'detached' });
    expect(nativeDialogs).toEqual([]);
  });

  it('keeps the message toolbar off the other messages’ times, wide and at phone width', async () => {
    const a = alice.page;
    // Each with its own head (name and time): the next one's time is where a toolbar could fall.
    await send(a, 'Toolbar one');
    await send(bob.page, 'Toolbar two, from someone with a long name');
    await send(a, 'Toolbar three');
    await timeline(a).getByText('Toolbar three').waitFor();
    for (const width of [1280, 375]) {
      await a.setViewportSize({ width, height: 800 });
      for (const text of ['Toolbar one', 'Toolbar two']) {
        const m = timeline(a).locator('article.msg', { hasText: text });
        await m.hover();
        const bar = m.locator('.msg-actions');
        await bar.waitFor();
        const barBox = (await bar.boundingBox())!;
        const others = timeline(a)
          .locator('article.msg')
          .filter({ hasNotText: text })
          .locator('.msg-head time');
        const times = await boxes(others);
        expect(times.length).toBeGreaterThan(1);
        for (const t of times) expect(overlap(barBox, t), `toolbar at ${width} px`).toBe(false);
      }
    }
    await shot(a, '21-phone-toolbar');
  });

  it('keeps the channel name and topic clear of the header’s buttons at 375 px', async () => {
    const a = alice.page;
    await a.setViewportSize({ width: 1280, height: 800 });
    await a
      .getByRole('toolbar', { name: 'Conversation tools' })
      .getByRole('button', { name: 'Edit' })
      .click();
    await a.getByLabel('Topic').fill('Where the whole team talks about everything');
    await a.getByRole('button', { name: 'Save' }).click();
    await a.getByText('Where the whole team talks').waitFor();
    await a.setViewportSize({ width: 375, height: 800 });
    const title = a.locator('#conv-title');
    const topic = a.locator('.conv-title .topic');
    const buttons = await boxes(
      a.getByRole('toolbar', { name: 'Conversation tools' }).getByRole('button'),
    );
    expect(buttons.length).toBeGreaterThan(1);
    for (const text of [await textBox(title), await textBox(topic)]) {
      for (const b of buttons) expect(overlap(text, b)).toBe(false);
    }
    // The topic is readable, not squeezed to nothing.
    expect((await topic.boundingBox())!.width).toBeGreaterThan(150);
    await shot(a, '22-phone-header');
    await checkA11y(a, 'conversation at 375 px');
    await a.setViewportSize({ width: 1280, height: 800 });
  });

  it('sends a file from an empty box as the file alone, with no text', async () => {
    const a = alice.page;
    await a
      .locator('[data-testid=attach-input]')
      .setInputFiles([
        { name: 'minutes.txt', mimeType: 'text/plain', buffer: Buffer.from('what we agreed\n') },
      ]);
    const pending = a.getByRole('list', { name: 'Files to send' });
    await pending.getByText('ready').waitFor({ timeout: 15_000 });
    await composer(a).press('Enter');
    for (const p of [a, bob.page]) {
      const link = timeline(p).getByRole('link', { name: /minutes\.txt/ });
      await link.waitFor({ timeout: 15_000 });
      const msg = timeline(p).locator('article.msg', { has: link });
      expect(await msg.locator('.text').allTextContents()).toEqual(
        expect.not.arrayContaining([expect.stringContaining('minutes.txt')]),
      );
    }
    expect(await pending.count()).toBe(0);
  });

  it('goes back to / when signing out from settings', async () => {
    const b = bob.page;
    await b.getByRole('button', { name: 'Settings' }).click();
    await b.getByRole('link', { name: 'Account' }).click();
    await b.getByRole('button', { name: 'Sign out of this browser' }).click();
    await b.getByRole('button', { name: /Sign in as bob/ }).waitFor();
    expect(new URL(b.url()).pathname).toBe('/');
    expect(alice.problems).toEqual([]);
    expect(bob.problems).toEqual([]);
  });
});
