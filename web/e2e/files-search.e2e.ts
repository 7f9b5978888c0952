/// <reference lib="dom" />
// The features built on the file routes and search, in two browser contexts against a real
// server: a file and an image attached and seen by the other person (the image as a preview
// through the download route), an avatar, a custom emoji added by the owner and used in text and
// as a reaction, and a message found by search (a CJK query) and jumped to.
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';

import { checkA11y } from './a11y.js';
import {
  composer,
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

let alice: Person;
let bob: Person;

function square(colour: string, size = 96): Promise<Buffer> {
  return sharp({
    create: { width: size, height: size, channels: 3, background: colour },
  })
    .png()
    .toBuffer();
}

serveThisFile(async ({ server, browser }) => {
  alice = await personPage(browser, server.url);
  bob = await personPage(browser, server.url);
  await signUpWithWorkspace(alice.page, 'alice', 'Alice', 'Files');
  await joinByInvite(bob.page, await createInviteLink(alice.page), 'bob', 'Bob');
});

describe('files, avatars, custom emoji and search in the web client', () => {
  it('attaches a file and an image; the other person sees the link and the preview', async () => {
    const p = alice.page;
    await p.locator('[data-testid=attach-input]').setInputFiles([
      { name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('the plan, in words\n') },
      { name: 'square.png', mimeType: 'image/png', buffer: await square('#3366ff') },
    ]);
    const pending = p.getByRole('list', { name: 'Files to send' });
    await expect.poll(() => pending.getByText('ready').count(), { timeout: 15_000 }).toBe(2);
    await send(p, 'Here is the deployment plan');
    const mine = timeline(p).locator('article.msg', { hasText: 'Here is the deployment plan' });
    await mine.getByRole('link', { name: /notes\.txt/ }).waitFor();

    const theirs = timeline(bob.page).locator('article.msg', {
      hasText: 'Here is the deployment plan',
    });
    await theirs.getByRole('link', { name: /notes\.txt/ }).waitFor({ timeout: 15_000 });
    await expect(theirs.getByText('19 B').count()).resolves.toBe(1);
    const img = theirs.getByRole('img', { name: 'square.png' });
    await img.waitFor();
    await expect.poll(() => img.evaluate((el) => (el as HTMLImageElement).naturalWidth)).toBe(96);
    const href = await theirs.getByRole('link', { name: /notes\.txt/ }).getAttribute('href');
    const text = await bob.page.evaluate(async (u) => (await fetch(u)).text(), href ?? '');
    expect(text).toBe('the plan, in words\n');
    await shot(bob.page, '20-attachments');
    await checkA11y(bob.page, 'timeline with attachments');
  });

  it('says in words why a file was refused', async () => {
    const p = alice.page;
    await p
      .locator('[data-testid=attach-input]')
      .setInputFiles([
        { name: 'fake.png', mimeType: 'image/png', buffer: Buffer.from('not a picture at all') },
      ]);
    await p.getByText('does not take this kind of file').waitFor({ timeout: 15_000 });
    await p.getByRole('button', { name: 'Remove fake.png' }).click();
  });

  it('sets an avatar in the profile settings, shown beside messages', async () => {
    const p = alice.page;
    await p.getByRole('button', { name: 'Settings' }).click();
    await p
      .getByLabel(/Choose a picture/)
      .setInputFiles({ name: 'me.png', mimeType: 'image/png', buffer: await square('#ff8800') });
    await p.getByText('Your picture was saved.').waitFor();
    await shot(p, '21-avatar-setting');
    await p.goBack();
    await p.getByRole('heading', { name: '#general' }).waitFor();
    const avatar = timeline(p)
      .locator('article.msg', { hasText: 'Here is the deployment plan' })
      .locator('img.avatar');
    await expect.poll(() => avatar.getAttribute('src')).toMatch(/^\/api\/files\/avatars\//);
  });

  it('lets the owner add a custom emoji, used in text and as a reaction', async () => {
    const p = alice.page;
    await p.getByRole('button', { name: 'Invite people' }).click();
    await p.getByRole('tab', { name: 'Custom emoji' }).click();
    await p.getByLabel('Name', { exact: true }).fill('Party');
    await p.getByLabel('Image').setInputFiles({
      name: 'party.png',
      mimeType: 'image/png',
      buffer: await square('#22aa44', 64),
    });
    await p.getByRole('button', { name: 'Add emoji' }).click();
    await p.getByRole('list', { name: 'Custom emoji' }).getByText(':party:').waitFor();
    await shot(p, '22-custom-emoji-settings');
    await p.keyboard.press('Escape');
    await composer(p).fill('Release day :party: at noon');
    await composer(p).press('Enter');
    await timeline(p)
      .locator('article.msg', { hasText: 'Release day' })
      .getByRole('img', { name: ':party:' })
      .waitFor();

    // Bob reads the emoji list again on a fresh load, and sees Alice's new avatar too.
    const b = bob.page;
    await b.reload();
    const msg = timeline(b).locator('article.msg', { hasText: 'Release day' });
    await msg.getByRole('img', { name: ':party:' }).waitFor({ timeout: 15_000 });
    await expect
      .poll(() =>
        timeline(b)
          .locator('article.msg', { hasText: 'Here is the deployment plan' })
          .locator('img.avatar')
          .getAttribute('src'),
      )
      .toMatch(/^\/api\/files\/avatars\//);
    await msg.hover();
    await msg.getByRole('button', { name: 'Add a reaction' }).click();
    await b.getByRole('searchbox', { name: 'Search emoji' }).fill('party');
    await b.getByRole('option', { name: 'party', exact: true }).click();
    const reaction = timeline(alice.page).getByRole('button', { name: /^:party: 1/ });
    await reaction.waitFor({ timeout: 15_000 });
    await expect(reaction.locator('img.custom-emoji').count()).resolves.toBe(1);
    await shot(alice.page, '23-custom-emoji');
  });

  it('finds a message by search (a CJK query) and jumps to it', async () => {
    const b = bob.page;
    await send(b, '来週東京都に行く予定です。');
    for (let i = 0; i < 8; i++) await send(b, `Filler message ${i}`);
    const p = alice.page;
    await timeline(p).getByText('Filler message 7').waitFor();
    await p.keyboard.press('Control+Shift+F');
    const dialog = p.getByRole('dialog', { name: 'Search messages' });
    await dialog.getByLabel('Words to find').fill('東京');
    await dialog.getByLabel('Words to find').press('Enter');
    const hits = dialog.getByRole('list', { name: 'Messages found' });
    await hits.locator('mark', { hasText: '東京' }).waitFor();
    await shot(p, '24-search');
    await checkA11y(p, 'search results');
    await hits.getByRole('button').first().click();
    const found = timeline(p).locator('article.msg.found', { hasText: '東京都に行く' });
    await found.waitFor();
    await expect.poll(() => found.evaluate((el) => el === document.activeElement)).toBe(true);

    await p.getByRole('button', { name: /^Search/ }).click();
    await dialog.getByLabel('Words to find').fill('DEPLOYMENT plan');
    await dialog.getByLabel('Words to find').press('Enter');
    await hits.locator('mark', { hasText: 'deployment' }).waitFor();
    // Another order is a new search, ranked by relevance.
    await dialog.getByLabel('Order').selectOption('RELEVANCE');
    await expect.poll(() => dialog.getByRole('status').textContent()).toMatch(/found/);
    await hits.locator('mark', { hasText: 'deployment' }).first().waitFor();
    await dialog.getByRole('button', { name: 'Close' }).click();

    await p.getByRole('button', { name: 'Browse channels' }).click();
    const browser = p.getByRole('dialog', { name: 'Channels' });
    await browser.getByLabel('Find a channel by name or topic').fill('RAND');
    await expect.poll(() => browser.getByText('#general').count()).toBe(0);
    await browser.getByText('#random').waitFor();
    await p.keyboard.press('Escape');
    expect(alice.problems).toEqual([]);
    expect(bob.problems).toEqual([]);
  });
});
