/// <reference lib="dom" />
// axe-core on the main screens the feature files do not reach (issue 43, quality bars;
// docs/web-client.md, "Screens"): account creation and joining by invite, the workspace dialogs
// (create or join, browse and create channels, channel settings, new message with people picked),
// the workspace's other tabs, the side pane's members and pins, jumping to a conversation, and
// the settings pages. Each must have no serious or critical violation.
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';

import { checkA11y } from './a11y.js';
import {
  createInviteLink,
  personPage,
  serveThisFile,
  signUp,
  signUpWithWorkspace,
  type Person,
} from './harness.js';

let alice: Person;
let bob: Person;

/** Opens a dialog with a button, checks it, and closes it with Escape. */
async function checkDialog(p: Page, button: string, title: string | RegExp): Promise<void> {
  await p.getByRole('button', { name: button, exact: true }).click();
  await p.getByRole('dialog', { name: title }).waitFor();
  await checkA11y(p, `the dialog “${String(title)}”`);
  await p.keyboard.press('Escape');
  await expect.poll(() => p.getByRole('dialog', { name: title }).count()).toBe(0);
}

serveThisFile(async ({ server, browser }) => {
  alice = await personPage(browser, server.url);
  bob = await personPage(browser, server.url);
  await signUpWithWorkspace(alice.page, 'alice', 'Alice', 'Team');
});

describe('the main screens, checked with axe', () => {
  it('creating an account and joining by invite', async () => {
    const b = bob.page;
    await b.goto(new URL(await createInviteLink(alice.page)).pathname);
    await b.getByText('You were invited to a workspace').waitFor();
    await checkA11y(b, 'joining by invite');
    await b.getByRole('tab', { name: 'Create account' }).click();
    await checkA11y(b, 'creating an account');
    await signUp(b, 'bob', 'Bob');
    await b.getByRole('heading', { name: '#general' }).waitFor({ timeout: 20_000 });
  });

  it('the workspace dialogs and tabs', async () => {
    const a = alice.page;
    await checkDialog(a, 'Create or join a workspace', /workspace/i);
    await checkDialog(a, 'Browse channels', /channels/i);
    await checkDialog(a, 'New channel', /channel/i);
    await a.getByRole('button', { name: 'Edit', exact: true }).click();
    await a.getByRole('dialog').waitFor();
    await checkA11y(a, 'channel settings');
    await a.keyboard.press('Escape');
    await a.getByRole('button', { name: 'Members and moderation' }).click();
    for (const tab of ['Invites', 'Reports', 'Settings', 'Custom emoji']) {
      await a.getByRole('tab', { name: tab }).click();
      await a.getByRole('tab', { name: tab, selected: true }).waitFor();
      await checkA11y(a, `the workspace’s ${tab} tab`);
    }
    await a.keyboard.press('Escape');
  });

  it('the side pane, jumping to a conversation, and a new message', async () => {
    const a = alice.page;
    await a.getByRole('button', { name: /^Members \(/ }).click();
    await a.getByRole('complementary').waitFor();
    await checkA11y(a, 'the members pane');
    await a.getByRole('button', { name: 'Pinned' }).click();
    await checkA11y(a, 'the pinned messages pane');
    await a.keyboard.press('Control+k');
    await a.getByRole('dialog').waitFor();
    await checkA11y(a, 'jumping to a conversation');
    await a.keyboard.press('Escape');

    const b = bob.page;
    await b.getByRole('button', { name: /^Direct messages/ }).click();
    await b.getByRole('button', { name: 'New message' }).click();
    const dialog = b.getByRole('dialog', { name: 'New message' });
    await dialog.getByRole('checkbox', { name: /Alice/ }).check();
    await checkA11y(b, 'a new message, people picked');
    await b.keyboard.press('Escape');
  });

  it('the settings pages', async () => {
    const a = alice.page;
    await a.getByRole('button', { name: 'Settings', exact: true }).click();
    for (const tab of ['Profile and look', 'Messages and privacy', 'Sessions', 'Account']) {
      await a.getByRole('link', { name: tab }).click();
      await a.getByRole('heading', { level: 2 }).first().waitFor();
      await checkA11y(a, `settings, ${tab}`);
    }
    expect(alice.problems).toEqual([]);
    expect(bob.problems).toEqual([]);
  });
});
