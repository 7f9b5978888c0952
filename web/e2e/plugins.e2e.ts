/// <reference lib="dom" />
// Plugins in the workspace settings (issue 43, item 3; docs/plugins.md): the owner uploads a
// bundle (a refused one is said in words), the plugin's commands join a member's `/` list at
// once (live), its settings form is made from the bundle's schema and keeps what is saved,
// disabling and enabling takes its commands out of the list and back, a new version replaces
// the entry, and removing it ends its commands. A member is not offered the registry.
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';

import { bundleBytes, exampleVersion } from '../../test/plugins/_bundles.js';
import { checkA11y } from './a11y.js';
import {
  composer,
  createInviteLink,
  joinByInvite,
  personPage,
  shot,
  signUpWithWorkspace,
  serveThisFile,
  type Person,
} from './harness.js';

let alice: Person;
let bob: Person;

const suggestions = (p: Page) => p.getByRole('listbox', { name: 'Suggestions' });
/** The `/standup` option of the list, as the plugin's command shows there. */
const standupOption = (p: Page) =>
  suggestions(p).getByRole('option', {
    name: /^\/standup <yesterday> <today> \[blocked\] · Post your standup update \(plugin com\.example\.standup\)/,
  });

async function openPlugins(p: Page): Promise<void> {
  await p.getByRole('button', { name: 'Members and moderation' }).click();
  await p.getByRole('tab', { name: 'Plugins' }).click();
  await p.getByRole('heading', { name: 'Installed plugins' }).waitFor();
}

async function upload(p: Page, name: string, bytes: Buffer): Promise<void> {
  await p.getByLabel('Plugin bundle').setInputFiles({
    name,
    mimeType: 'application/json',
    buffer: bytes,
  });
  await p.getByRole('button', { name: 'Upload and add' }).click();
}

/**
 * Types `/s` in Bob's box and answers how many `/standup` options the list shows once the
 * answer is in (`/shrug` is always there, so its showing means the list was read).
 */
async function bobSeesStandup(): Promise<number> {
  const b = bob.page;
  await composer(b).fill('');
  await composer(b).pressSequentially('/s');
  await suggestions(b)
    .getByRole('option', { name: /^\/shrug/ })
    .waitFor();
  const n = await standupOption(b).count();
  await composer(b).fill('');
  return n;
}

serveThisFile(async ({ server, browser }) => {
  alice = await personPage(browser, server.url);
  bob = await personPage(browser, server.url);
  await signUpWithWorkspace(alice.page, 'alice', 'Alice', 'Team');
  await joinByInvite(bob.page, await createInviteLink(alice.page), 'bob', 'Bob');
});

describe('plugins in the workspace settings', () => {
  it('refuses a bad bundle in words, adds a good one, and its commands reach a member live', async () => {
    const a = alice.page;
    // Bob's list is read (and kept) before the plugin exists.
    await composer(bob.page).pressSequentially('/sh');
    await suggestions(bob.page)
      .getByRole('option', { name: /^\/shrug/ })
      .waitFor();
    await composer(bob.page).fill('');

    await openPlugins(a);
    await a.getByText('No plugins yet.').waitFor();
    await checkA11y(a, 'the plugin registry');
    await upload(
      a,
      'future.json',
      bundleBytes((b) => {
        b.formatVersion = 2;
      }),
    );
    await a
      .getByRole('alert')
      .filter({ hasText: 'this server reads bundles of format 1 only' })
      .waitFor();

    await upload(a, 'standup.json', bundleBytes());
    const entry = a.getByRole('listitem', { name: /^Standup 1\.2\.0/ });
    await entry.waitFor();
    await entry
      .getByRole('list', { name: 'Commands of Standup' })
      .getByText('/standup <yesterday> <today> [blocked]')
      .waitFor();
    expect(await entry.textContent()).toMatch(/messages:read, messages:write, channels:read/);
    await checkA11y(a, 'a plugin in the registry');
    await shot(a, 'plugins');

    // The new command is in Bob's list without a reload, and runs through the server, then in
    // the plugin's sandbox: its handler posts to the channel its settings name, #standup, which
    // this workspace lacks, and the refusal comes back in words by the box, the line kept.
    await expect.poll(bobSeesStandup).toBe(1);
    await composer(bob.page).fill('/standup "fixed the build" "ship it"');
    await composer(bob.page).press('Enter');
    await bob.page
      .locator('.composer')
      .getByRole('alert')
      .filter({
        hasText:
          '/standup failed in the Standup plugin: you are in no channel #standup of this workspace.',
      })
      .waitFor();
    expect(await composer(bob.page).inputValue()).toBe('/standup "fixed the build" "ship it"');
    await composer(bob.page).fill('');
  });

  it('makes the settings form from the bundle’s schema and keeps what is saved', async () => {
    const a = alice.page;
    await a.getByRole('button', { name: 'Settings of Standup' }).click();
    const form = a.getByRole('form', { name: 'Settings of Standup' });
    const channel = form.getByLabel('Channel', { exact: true });
    const hour = form.getByLabel('Reminder hour (optional)');
    const style = form.getByLabel('style (optional)');
    // The defaults, the description as the field's hint, the schema's bounds on the field.
    expect(await channel.inputValue()).toBe('standup');
    expect(await channel.getAttribute('maxlength')).toBe('80');
    expect(await hour.inputValue()).toBe('9');
    expect([await hour.getAttribute('min'), await hour.getAttribute('max')]).toEqual(['0', '23']);
    expect(await style.inputValue()).toBe('short');
    expect(await form.getByText('Name of the standup channel').count()).toBe(1);
    await checkA11y(a, 'a plugin’s settings');

    await channel.fill('daily');
    await hour.fill('7');
    await style.selectOption('detailed');
    await form.getByRole('button', { name: 'Save settings' }).click();
    await a.getByText('The settings of Standup were saved.').waitFor();
    await expect.poll(() => form.count()).toBe(0);

    // Read back from the server: the form opens again with what was saved.
    await a.getByRole('button', { name: 'Settings of Standup' }).click();
    expect(await channel.inputValue()).toBe('daily');
    expect(await hour.inputValue()).toBe('7');
    expect(await style.inputValue()).toBe('detailed');
    await a.getByRole('button', { name: 'Settings of Standup' }).click();
  });

  it('disables and enables a plugin, its commands leaving the list and coming back', async () => {
    const a = alice.page;
    await a.getByRole('button', { name: 'Disable Standup' }).click();
    await a.getByRole('listitem', { name: /^Standup 1\.2\.0 disabled/ }).waitFor();
    await expect.poll(bobSeesStandup).toBe(0);
    await a.getByRole('button', { name: 'Enable Standup' }).click();
    await a.getByRole('button', { name: 'Disable Standup' }).waitFor();
    await expect.poll(bobSeesStandup).toBe(1);
  });

  it('replaces the plugin with a new version, keeping its settings', async () => {
    const a = alice.page;
    await upload(a, 'standup-1.3.0.json', exampleVersion('1.3.0'));
    const dialog = a.getByRole('dialog', { name: 'Replace Standup 1.2.0?' });
    await dialog.getByRole('button', { name: 'Replace' }).click();
    await a.getByText('Standup is now version 1.3.0.').waitFor();
    await a.getByRole('listitem', { name: /^Standup 1\.3\.0/ }).waitFor();
    await a.getByRole('button', { name: 'Settings of Standup' }).click();
    expect(
      await a
        .getByRole('form', { name: 'Settings of Standup' })
        .getByLabel('Channel', { exact: true })
        .inputValue(),
    ).toBe('daily');
    await a.getByRole('button', { name: 'Settings of Standup' }).click();
  });

  it('removes the plugin after asking, and its commands are gone', async () => {
    const a = alice.page;
    await a.getByRole('button', { name: 'Remove Standup' }).click();
    await a
      .getByRole('dialog', { name: 'Remove Standup?' })
      .getByRole('button', { name: 'Remove' })
      .click();
    await a.getByText('No plugins yet.').waitFor();
    await expect.poll(bobSeesStandup).toBe(0);
  });

  it('does not offer the registry to a member', async () => {
    const b = bob.page;
    await composer(b).fill('');
    await b.getByRole('button', { name: 'Members', exact: true }).click();
    await b.getByRole('tab', { name: 'Members' }).waitFor();
    expect(await b.getByRole('tab', { name: 'Plugins' }).count()).toBe(0);
    await b.keyboard.press('Escape');
    expect(alice.problems).toEqual([]);
    expect(bob.problems).toEqual([]);
  });
});
