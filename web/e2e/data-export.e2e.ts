/// <reference lib="dom" />
// Downloading your own data from the settings (docs/export.md, "Downloading your own data"): the
// person asks, the page shows it being prepared, then offers the archive, which downloads as a
// ZIP holding the manifest and the messages they wrote.
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

let carol: Person;

serveThisFile(async ({ server, browser }) => {
  carol = await personPage(browser, server.url);
  await signUpWithWorkspace(carol.page, 'carol', 'Carol', 'Exported');
  await send(carol.page, 'words of my own to take along');
});

describe('downloading your own data in the web client', () => {
  it('asks for a copy in the settings, waits for it, and downloads the archive', async () => {
    const p = carol.page;
    await p.getByRole('button', { name: 'Settings' }).click();
    await p.getByRole('link', { name: 'Account' }).click();
    const section = p.getByRole('region', { name: 'Download your data' });
    await section.getByText(/ciphertext the server holds/).waitFor();
    await section.getByRole('button', { name: 'Ask for a copy of my data' }).click();
    const link = section.getByRole('link', { name: /^Download \(/ });
    await link.waitFor({ timeout: 20_000 });
    await checkA11y(p, 'settings, download your data');
    await shot(p, '30-settings-data-export');

    const [download] = await Promise.all([p.waitForEvent('download'), link.click()]);
    expect(download.suggestedFilename()).toMatch(/^svc-data-carol-\d{4}-\d{2}-\d{2}\.zip$/);
    const file = await download.path();
    const fs = await import('node:fs');
    const bytes = fs.readFileSync(file);
    // A ZIP archive (local file header) holding the export's manifest and the messages.
    expect(bytes.subarray(0, 4).toString('latin1')).toBe('PK\u0003\u0004');
    expect(bytes.includes(Buffer.from('manifest.json'))).toBe(true);
    expect(bytes.includes(Buffer.from('messages.jsonl'))).toBe(true);

    // Asking again within the hour says why it is refused.
    await section.getByRole('button', { name: 'Ask for a copy of my data' }).click();
    await section
      .getByRole('alert')
      .getByText(/Too many attempts/)
      .waitFor();
    await expect(section.getByRole('alert').textContent()).resolves.toMatch(
      /Wait .* and try again/,
    );
    expect(carol.problems).toEqual([]);
  });
});
