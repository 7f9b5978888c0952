/// <reference lib="dom" />
// Steps shared by the browser tests of encrypted conversations beyond web/e2e/encrypted.e2e.ts.
import type { Page } from 'playwright-core';

import { composer, openDirect, timeline } from './harness.js';

/** A GraphQL request sent from a page with its session, as the app sends them. */
export async function pageGql<T>(p: Page, query: string, variables: Record<string, unknown> = {}) {
  const res = await p.evaluate(
    async ({ query, variables }) => {
      const m = /(?:^|;\s*)svc_csrf=([^;]*)/.exec(document.cookie);
      const r = await fetch('/api', {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-csrf-token': m ? decodeURIComponent(m[1]!) : '',
        },
        body: JSON.stringify({ query, variables }),
      });
      return (await r.json()) as { data?: unknown; errors?: unknown };
    },
    { query, variables },
  );
  if (!res.data) throw new Error(JSON.stringify(res.errors));
  return res.data as T;
}

/** Sends from the open encrypted conversation's box and waits until it shows. */
export async function sendSecret(p: Page, text: string): Promise<void> {
  await composer(p).fill(text);
  await composer(p).press('Enter');
  await timeline(p).getByText(text, { exact: true }).waitFor({ timeout: 30_000 });
}

/** Starts an encrypted group conversation with the people named (checkbox labels). */
export async function startEncryptedGroup(p: Page, names: RegExp[]): Promise<void> {
  await openDirect(p);
  await p.getByRole('button', { name: 'New message' }).click();
  const dialog = p.getByRole('dialog', { name: 'New message' });
  for (const n of names) await dialog.getByRole('checkbox', { name: n }).check();
  await dialog.getByRole('checkbox', { name: /End-to-end encrypted/ }).check();
  await dialog
    .getByRole('button', {
      name: names.length > 1 ? 'Start group conversation' : 'Start conversation',
    })
    .click();
  await composer(p).waitFor({ timeout: 30_000 });
}

/** Accepts the invitation to an encrypted conversation and waits until this browser is in. */
export async function acceptInvitation(p: Page): Promise<void> {
  await openDirect(p);
  await p.getByRole('link', { name: /invitation/ }).click();
  await p.getByRole('button', { name: 'Accept' }).click();
  await p.locator('.e2ee-note[data-state="in"]').waitFor({ timeout: 30_000 });
}

/** What a timeline says of messages it could not read. */
export const UNREADABLE = /could not be decrypted|Hidden:|cannot be read here/;
