/// <reference lib="dom" />
// The search box's grammar in the browser against a real server: operator suggestions while
// typing (an operator, then a person's name), an inflected word highlighted as written, and a
// public channel the person left found and marked "not joined".
import { describe, expect, it } from 'vitest';

import { checkA11y } from './a11y.js';
import {
  personPage,
  send,
  shot,
  signUpWithWorkspace,
  serveThisFile,
  type Person,
} from './harness.js';

let alice: Person;

serveThisFile(async ({ server, browser }) => {
  alice = await personPage(browser, server.url);
  await signUpWithWorkspace(alice.page, 'alice', 'Alice', 'Grammar');
});

describe('the search box', () => {
  it('suggests operators and names, highlights inflected words, marks channels not joined', async () => {
    const p = alice.page;
    await send(p, 'Reporting the outage to the on-call engineer now');
    await send(p, 'Lunch is ready');
    // A message in #random, which Alice then leaves: still searchable, marked.
    await p
      .getByRole('link', { name: /random/ })
      .first()
      .click();
    await p.getByRole('heading', { name: '#random' }).waitFor();
    await send(p, 'The quarterly reports are published');
    await p
      .getByRole('toolbar', { name: 'Conversation tools' })
      .getByRole('button', { name: 'Leave' })
      .click();
    await p
      .getByRole('dialog', { name: 'Leave #random?' })
      .getByRole('button', { name: 'Leave' })
      .click();
    await p
      .getByRole('heading', { name: '#general' })
      .waitFor({ timeout: 15_000 })
      .catch(() => {});

    await p.keyboard.press('Control+Shift+F');
    const dialog = p.getByRole('dialog', { name: 'Search messages' });
    const box = dialog.getByLabel('Words to find');
    const suggestions = dialog.getByRole('list', { name: 'Suggestions' });
    await box.fill('report fr');
    await suggestions.getByRole('button', { name: /from:@/ }).click();
    await expect.poll(() => box.inputValue()).toBe('report from:@');
    await box.press('End');
    await box.type('al');
    await suggestions.getByRole('button', { name: /from:@alice/ }).click();
    await expect.poll(() => box.inputValue()).toBe('report from:@alice ');
    await shot(p, '30-search-suggestions');
    await box.press('Enter');
    const hits = dialog.getByRole('list', { name: 'Messages found' });
    await hits.locator('mark', { hasText: 'Reporting' }).waitFor();
    await hits.locator('mark', { hasText: 'reports' }).waitFor();
    const left = hits.getByRole('listitem').filter({ hasText: 'quarterly' });
    await expect.poll(() => left.textContent()).toMatch(/not joined/);
    const joined = hits.getByRole('listitem').filter({ hasText: 'outage' });
    await expect.poll(() => joined.textContent()).not.toMatch(/not joined/);
    await shot(p, '31-search-inflected');
    await checkA11y(p, 'search with suggestions');

    // A malformed query says what to write.
    await box.fill('report has:pizza');
    await box.press('Enter');
    await dialog.getByText(/has: takes file or link/i).waitFor();
    expect(alice.problems.filter((x) => !/VALIDATION|400/.test(x))).toEqual([]);
  });
});
