/// <reference lib="dom" />
// Commands in the web client (issue 43, item 2; docs/commands.md): `/` in the message box lists
// what the person may run here with argument hints; choosing one opens its arguments by name;
// a typed line runs as the message box's text; a refusal is said in words by the box; a
// destructive command is confirmed in the app's dialog with the server's summary; macros are
// made, edited, run and deleted; a keybind is captured as a chord (the browser's own refused)
// and runs from anywhere in the app; a workspace's macros and keybinds are made by its owner in
// the workspace dialog, run by a member, and shown to the member without a way to change them.
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';

import { checkA11y } from './a11y.js';
import {
  composer,
  createInviteLink,
  joinByInvite,
  personPage,
  shot,
  signUpWithWorkspace,
  serveThisFile,
  timeline,
  type Person,
} from './harness.js';

let alice: Person;
let bob: Person;

const suggestions = (p: Page) => p.getByRole('listbox', { name: 'Suggestions' });

async function openCommandSettings(p: Page): Promise<void> {
  await p.getByRole('button', { name: 'Settings', exact: true }).click();
  await p.getByRole('link', { name: 'Commands' }).click();
  await p.getByRole('heading', { name: 'Commands', level: 2 }).waitFor();
}

async function backToGeneral(p: Page): Promise<void> {
  await p.getByRole('button', { name: /^Team/ }).click();
  await p.getByRole('link', { name: /^#general/ }).click();
  await p.getByRole('heading', { name: '#general' }).waitFor();
}

serveThisFile(async ({ server, browser }) => {
  alice = await personPage(browser, server.url);
  bob = await personPage(browser, server.url);
  await signUpWithWorkspace(alice.page, 'alice', 'Alice', 'Team');
  await joinByInvite(bob.page, await createInviteLink(alice.page), 'bob', 'Bob');
});

describe('commands in the web client', () => {
  it('lists the commands one may run here after /, with argument hints', async () => {
    const a = alice.page;
    await composer(a).pressSequentially('/');
    const list = suggestions(a);
    await list.getByRole('option', { name: /^\/timeout <user> <duration>/ }).waitFor();
    await list.getByRole('option', { name: /^\/shrug \[text\]/ }).waitFor();
    await checkA11y(a, 'the command list');
    await shot(a, 'commands-list');
    // A member is offered only what a member may run.
    await composer(bob.page).pressSequentially('/');
    await suggestions(bob.page)
      .getByRole('option', { name: /^\/shrug/ })
      .waitFor();
    expect(
      await suggestions(bob.page)
        .getByRole('option', { name: /^\/kick/ })
        .count(),
    ).toBe(0);
    await composer(bob.page).fill('');
    await composer(a).pressSequentially('sh');
    // The list narrows once the answer for "/sh" is in.
    await expect.poll(() => list.getByRole('option').count()).toBe(1);
    await composer(a).press('Enter');
    const form = a.getByRole('form', { name: 'Run /shrug' });
    await form.getByLabel('text (optional)').fill('fine');
    await checkA11y(a, 'a command’s arguments');
    await form.getByRole('button', { name: 'Run /shrug' }).click();
    // The shrug's underscores are markup, so the text is looked for by its parts.
    await timeline(a)
      .locator('article.msg', { hasText: 'fine' })
      .filter({ hasText: '(ツ)' })
      .waitFor();
    // The form closes when the run's answer is in (the message may come first, live).
    await expect.poll(() => form.count()).toBe(0);
  });

  it('runs a typed line, and says a refusal in words by the box', async () => {
    const a = alice.page;
    await composer(a).fill('/me waves at everyone');
    await composer(a).press('Enter');
    await timeline(a).locator('em', { hasText: 'waves at everyone' }).waitFor();
    await timeline(bob.page).locator('em', { hasText: 'waves at everyone' }).waitFor();

    await composer(a).fill('/timeout @bob 29d');
    await composer(a).press('Enter');
    const alert = a.locator('.composer').getByRole('alert');
    await alert.waitFor();
    expect(await alert.textContent()).toMatch(/duration/i);
    // Nothing is lost: the line stays to be corrected.
    expect(await composer(a).inputValue()).toBe('/timeout @bob 29d');

    await composer(a).fill('/nosuch thing');
    await composer(a).press('Enter');
    await a
      .locator('.composer')
      .getByRole('alert')
      .filter({ hasText: 'There is no command /nosuch here.' })
      .waitFor();
  });

  it('confirms a destructive command in the app’s dialog with the server’s summary', async () => {
    const a = alice.page;
    await composer(a).fill('/timeout @bob 10m');
    await composer(a).press('Enter');
    const dialog = a.getByRole('dialog', { name: 'Run /timeout?' });
    await dialog.waitFor();
    expect(await dialog.textContent()).toMatch(/@bob/);
    await checkA11y(a, 'a command’s confirmation');
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    expect(await bob.page.getByText('You are timed out here').count()).toBe(0);

    await composer(a).fill('/timeout @bob 10m');
    await composer(a).press('Enter');
    await a
      .getByRole('dialog', { name: 'Run /timeout?' })
      .getByRole('button', { name: 'Run /timeout' })
      .click();
    await bob.page.getByText('You are timed out here').waitFor({ timeout: 15_000 });
    // The box empties when the run's answer is in (Bob's notice may come first, live).
    await expect.poll(() => composer(a).inputValue()).toBe('');
  });

  it('makes, edits, runs and deletes a macro', async () => {
    const a = alice.page;
    await openCommandSettings(a);
    await a.getByRole('button', { name: 'New macro' }).click();
    const form = a.getByRole('form', { name: 'New macro' });
    await form.getByLabel('Name').fill('standup');
    await form.getByLabel('Parameters (optional, separated by commas)').fill('what');
    await form.getByLabel('Steps, one command a line').fill('/me text={{what}}');
    await form.getByRole('button', { name: 'Make macro' }).click();
    await a.getByRole('button', { name: 'Edit /standup' }).click();
    await a
      .getByRole('form', { name: 'Edit /standup' })
      .getByLabel('Description (optional)')
      .fill('Say what I do today');
    await a
      .getByRole('form', { name: 'Edit /standup' })
      .getByRole('button', { name: 'Save macro' })
      .click();
    await a.getByText('Say what I do today').waitFor();
    await checkA11y(a, 'command settings');

    await backToGeneral(a);
    await composer(a).pressSequentially('/stand');
    await suggestions(a)
      .getByRole('option', { name: /^\/standup <what> · macro: Say what I do today/ })
      .waitFor();
    await composer(a).fill('/standup "shipping the palette"');
    await composer(a).press('Enter');
    await timeline(a).locator('em', { hasText: 'shipping the palette' }).waitFor();

    await openCommandSettings(a);
    await a.getByRole('button', { name: 'Delete /standup' }).click();
    await a
      .getByRole('dialog', { name: 'Delete /standup?' })
      .getByRole('button', { name: 'Delete' })
      .click();
    await a.getByText('No macros yet.').waitFor();
  });

  it('binds a chord (not one of the browser’s) and runs it from anywhere in the app', async () => {
    const a = alice.page;
    await openCommandSettings(a);
    const keys = a.getByLabel('Keys', { exact: true });
    await keys.focus();
    await a.keyboard.press('Control+T');
    await a.getByText('Ctrl+T belongs to the browser.').waitFor();
    expect(await a.getByRole('button', { name: 'Bind keys' }).isDisabled()).toBe(true);
    await keys.focus();
    await a.keyboard.press('Control+Alt+J');
    await expect.poll(() => keys.inputValue()).toBe('Ctrl+Alt+J');
    await a.getByLabel('Command', { exact: true }).fill('/shrug');
    await a.getByLabel('Arguments (optional, name=value)').fill('text=keyed');
    await a.getByRole('button', { name: 'Bind keys' }).click();
    await a.getByText('runs /shrug text=keyed').waitFor();

    await backToGeneral(a);
    await a.getByRole('heading', { name: '#general' }).click();
    await a.keyboard.press('Control+Alt+J');
    await timeline(a)
      .locator('article.msg', { hasText: 'keyed' })
      .filter({ hasText: '(ツ)' })
      .waitFor();
    await openCommandSettings(a);
    await a.getByRole('button', { name: 'Remove Ctrl+Alt+J' }).click();
    await a.getByText('No keybinds yet.').waitFor();
  });

  it('lets the owner make a workspace’s macros and keybinds, which every member runs and a member only sees', async () => {
    const a = alice.page;
    const b = bob.page;
    await backToGeneral(a);
    // Bob was timed out above: the owner ends it, so he may post again.
    await a.getByRole('button', { name: 'Members and moderation' }).click();
    await a.getByRole('button', { name: 'End timeout' }).click();
    await expect.poll(() => a.getByRole('button', { name: 'End timeout' }).count()).toBe(0);
    await a.getByRole('tab', { name: 'Commands' }).click();
    await a.getByRole('heading', { name: 'Workspace macros' }).waitFor();
    await a.getByRole('button', { name: 'New macro' }).click();
    const form = a.getByRole('form', { name: 'New macro' });
    await form.getByLabel('Name').fill('teamup');
    await form.getByLabel('Description (optional)').fill('Everyone together');
    await form.getByLabel('Steps, one command a line').fill('/shrug text=together');
    await form.getByRole('button', { name: 'Make macro' }).click();
    await a.getByRole('button', { name: 'Delete /teamup' }).waitFor();
    const keys = a.getByLabel('Keys', { exact: true });
    await keys.focus();
    await a.keyboard.press('Control+Alt+Y');
    await expect.poll(() => keys.inputValue()).toBe('Ctrl+Alt+Y');
    await a.getByLabel('Command', { exact: true }).fill('/shrug');
    await a.getByLabel('Arguments (optional, name=value)').fill('text=all-hands');
    await a.getByRole('button', { name: 'Bind keys' }).click();
    await a.getByText('runs /shrug text=all-hands').waitFor();
    await checkA11y(a, 'a workspace’s commands');
    await shot(a, 'workspace-commands');
    await a.keyboard.press('Escape');
    // They are the workspace's, not the owner's own.
    await openCommandSettings(a);
    await a.getByText('No macros yet.').waitFor();
    await a.getByText('No keybinds yet.').waitFor();
    await backToGeneral(a);

    // Bob reads the workspace's lists afresh (the app keeps them a minute).
    await b.reload();
    await b.getByRole('heading', { name: '#general' }).waitFor();
    await composer(b).pressSequentially('/team');
    await suggestions(b)
      .getByRole('option', { name: /^\/teamup macro: Everyone together/ })
      .waitFor();
    // A space after the name closes the list, so Enter runs the line.
    await composer(b).fill('/teamup ');
    await composer(b).press('Enter');
    const byBob = (text: string) =>
      timeline(a)
        .locator('article.msg', { hasText: text })
        .filter({ hasText: '(ツ)' })
        .filter({ hasText: 'Bob' });
    await byBob('together').waitFor();
    await b.getByRole('heading', { name: '#general' }).click();
    await b.keyboard.press('Control+Alt+Y');
    await byBob('all-hands').waitFor();

    // Bob sees them but is offered no way to change them.
    await b.getByRole('button', { name: 'Members', exact: true }).click();
    await b.getByRole('tab', { name: 'Commands' }).click();
    await b.getByRole('heading', { name: 'Workspace keybinds' }).waitFor();
    await b.getByText('runs /shrug text=all-hands').waitFor();
    expect(await b.getByText('/teamup', { exact: true }).count()).toBe(1);
    expect(await b.getByRole('button', { name: 'Delete /teamup' }).count()).toBe(0);
    expect(await b.getByRole('button', { name: 'New macro' }).count()).toBe(0);
    expect(await b.getByRole('button', { name: 'Bind keys' }).count()).toBe(0);
    expect(await b.getByRole('button', { name: 'Remove Ctrl+Alt+Y' }).count()).toBe(0);
    await checkA11y(b, 'a workspace’s commands, as a member');
    await b.keyboard.press('Escape');

    await a.getByRole('button', { name: 'Members and moderation' }).click();
    await a.getByRole('tab', { name: 'Commands' }).click();
    await a.getByRole('button', { name: 'Remove Ctrl+Alt+Y' }).click();
    await a.getByRole('button', { name: 'Delete /teamup' }).click();
    await a
      .getByRole('dialog', { name: 'Delete /teamup?' })
      .getByRole('button', { name: 'Delete' })
      .click();
    await a.getByText('No macros yet.').waitFor();
    await a.getByText('No keybinds yet.').waitFor();
    expect(alice.problems).toEqual([]);
    expect(bob.problems).toEqual([]);
  });

  it('shows a workspace’s macros and keybinds changed elsewhere without a reload', async () => {
    const a = alice.page;
    const b = bob.page;
    await backToGeneral(b);
    // Bob's palette has read the workspace's macros already (kept a minute).
    await composer(b).pressSequentially('/stand');
    await expect.poll(() => suggestions(b).getByRole('option').count()).toBe(0);
    await composer(b).fill('');
    await b.getByRole('button', { name: 'Members', exact: true }).click();
    await b.getByRole('tab', { name: 'Commands' }).click();
    await b.getByText('No macros yet.').waitFor();

    await a.getByRole('tab', { name: 'Commands' }).click();
    await a.getByRole('button', { name: 'New macro' }).click();
    const form = a.getByRole('form', { name: 'New macro' });
    await form.getByLabel('Name').fill('standup');
    await form.getByLabel('Description (optional)').fill('Daily round');
    await form.getByLabel('Steps, one command a line').fill('/shrug text=standing');
    await form.getByRole('button', { name: 'Make macro' }).click();
    // Bob's open dialog follows: made, then edited (a new description), then deleted.
    await b.getByText('Daily round').waitFor();
    await a.getByRole('button', { name: 'Edit /standup' }).click();
    const edit = a.getByRole('form', { name: 'Edit /standup' });
    await edit.getByLabel('Description (optional)').fill('Morning round');
    await edit.getByRole('button', { name: 'Save macro' }).click();
    await b.getByText('Morning round').waitFor();
    expect(await b.getByText('Daily round').count()).toBe(0);

    const keys = a.getByLabel('Keys', { exact: true });
    await keys.focus();
    await a.keyboard.press('Control+Alt+U');
    await expect.poll(() => keys.inputValue()).toBe('Ctrl+Alt+U');
    await a.getByLabel('Runs').selectOption({ label: 'The macro /standup' });
    await a.getByRole('button', { name: 'Bind keys' }).click();
    await b.getByText('runs /standup').waitFor();
    await b.keyboard.press('Escape');

    // The palette and the keybind follow too, still without a reload.
    await composer(b).pressSequentially('/stand');
    await suggestions(b)
      .getByRole('option', { name: /^\/standup macro: Morning round/ })
      .waitFor();
    await composer(b).fill('');
    await b.getByRole('heading', { name: '#general' }).click();
    await b.keyboard.press('Control+Alt+U');
    await timeline(a)
      .locator('article.msg', { hasText: 'standing' })
      .filter({ hasText: 'Bob' })
      .waitFor();

    await b.getByRole('button', { name: 'Members', exact: true }).click();
    await b.getByRole('tab', { name: 'Commands' }).click();
    await b.getByText('Morning round').waitFor();
    await a.getByRole('button', { name: 'Delete /standup' }).click();
    await a
      .getByRole('dialog', { name: 'Delete /standup?' })
      .getByRole('button', { name: 'Delete' })
      .click();
    await b.getByText('No macros yet.').waitFor();
    await b.getByText('No keybinds yet.').waitFor();
    await b.keyboard.press('Escape');
    await a.keyboard.press('Escape');
    expect(alice.problems).toEqual([]);
    expect(bob.problems).toEqual([]);
  });
});
