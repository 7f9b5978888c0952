/// <reference lib="dom" />
// The app installs and starts offline (issue 43, item 5; docs/web-client.md, "Installable"): the
// page names a manifest with the instance's name and icons that Chromium accepts for install,
// and once the service worker holds the app shell, a reload without a network shows the app's
// own "offline, reconnecting" screen (not the browser's error page), which starts the app by
// itself when the network is back.
import type { Browser } from 'playwright-core';
import { describe, expect, it } from 'vitest';

import { checkA11y } from './a11y.js';
import {
  personPage,
  shot,
  signUpWithWorkspace,
  serveThisFile,
  type Person,
  type TestServer,
} from './harness.js';

let server: TestServer;
let browser: Browser;
let dana: Person;

serveThisFile(
  async (s) => {
    ({ server, browser } = s);
    dana = await personPage(browser, server.url);
    await signUpWithWorkspace(dana.page, 'dana', 'Dana', 'Installed');
  },
  { env: { SVC_INSTANCE_NAME: 'Acme Chat' } },
);

describe('the installable app', () => {
  it('names a manifest with the instance name and icons, and Chromium finds it installable', async () => {
    const p = dana.page;
    const href = await p.locator('link[rel=manifest]').getAttribute('href');
    const manifest = (await (await fetch(new URL(href!, server.url))).json()) as {
      name: string;
      start_url: string;
      display: string;
      icons: { src: string; type: string; sizes: string }[];
    };
    expect(manifest).toMatchObject({ name: 'Acme Chat', start_url: '/', display: 'standalone' });
    for (const icon of manifest.icons) {
      const res = await fetch(new URL(icon.src, server.url));
      expect(res.status, icon.src).toBe(200);
      expect(res.headers.get('content-type'), icon.src).toContain(icon.type);
    }
    const cdp = await dana.context.newCDPSession(p);
    const { installabilityErrors } = (await cdp.send('Page.getInstallabilityErrors')) as {
      installabilityErrors: { errorId: string }[];
    };
    // A test's browser context is an incognito one, where Chromium offers no install at all;
    // every other criterion (manifest, name, icons, start URL, display) must pass.
    const errors = installabilityErrors.map((e) => e.errorId).filter((e) => e !== 'in-incognito');
    expect(errors).toEqual([]);
    await cdp.detach();
  });

  it('starts offline from the kept shell, says so, and comes back by itself', async () => {
    const p = dana.page;
    await expect
      .poll(() => p.evaluate(() => navigator.serviceWorker.controller !== null), {
        timeout: 15_000,
      })
      .toBe(true);
    await dana.context.setOffline(true);
    await p.reload();
    await p.getByText('Offline, reconnecting…').waitFor({ timeout: 15_000 });
    await checkA11y(p, 'offline screen');
    await shot(p, 'offline');
    await dana.context.setOffline(false);
    await p.getByRole('heading', { name: '#general' }).waitFor({ timeout: 30_000 });
    expect(dana.problems).toEqual([]);
  });
});
