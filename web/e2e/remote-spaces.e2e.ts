/// <reference lib="dom" />
// Spaces on other servers (docs/federation.md, docs/web-client.md): two real servers on
// loopback, relay A and host B. Bob, a person of B, makes a workspace and an invite link; Alice,
// a person of A, joins it from her own app at A, which talks only to A (through
// /api/remote/<B>/... with her browser's device key) and checks B's signed answers. They talk
// live both ways, react and reply in a thread; then B goes down and Alice's app says so.
import fs from 'node:fs';

import type { Browser, Request } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { checkA11y } from './a11y.js';
import type { TestServer } from './harness.js';
import {
  assertBuilt,
  composer,
  createInviteLink,
  freePort,
  launchBrowser,
  openDirect,
  personPage,
  send,
  shot,
  signUp,
  signUpWithWorkspace,
  timeline,
  type Person,
} from './harness.js';
import { accountIdAt, apiAt, esc, federating, square } from './remote-harness.js';

let relay: TestServer;
let host: TestServer;
let hostId = '';
let browser: Browser;
let alice: Person;
let bob: Person;
let link = '';

/** Every request Alice's page made, to check it talked to its own server only. */
const aliceRequests: Request[] = [];

beforeAll(async () => {
  assertBuilt();
  const [a, b] = [await freePort(), await freePort()];
  // The host holds each person to five messages a minute (and a burst of five).
  [relay, host] = await Promise.all([
    federating(a),
    federating(b, { SVC_RATE_MESSAGES_PER_MIN_PER_USER: '5' }),
  ]);
  hostId = `127.0.0.1:${b}`;
  browser = await launchBrowser();
  alice = await personPage(browser, relay.url);
  bob = await personPage(browser, host.url);
  alice.page.on('request', (r) => aliceRequests.push(r));
});

afterAll(async () => {
  await browser?.close();
  await Promise.all([relay?.dispose(), host?.dispose()]);
});

describe('a workspace hosted on another server', () => {
  it('is joined from the host’s invite link, through the person’s own server', async () => {
    await signUpWithWorkspace(bob.page, 'bob', 'Bob', 'Harbour');
    link = await createInviteLink(bob.page);
    expect(new URL(link).host).toBe(hostId);

    const p = alice.page;
    await p.goto('/');
    await signUp(p, 'alice', 'Alice');
    await p.getByRole('button', { name: 'Create or join a workspace' }).click();
    await p.getByRole('dialog').getByLabel('Invite link or code').fill(link);
    await p.getByRole('button', { name: 'Join', exact: true }).click();
    await p.getByRole('heading', { name: '#general' }).waitFor({ timeout: 20_000 });
    // Beside her own, with the host shown.
    await p
      .getByRole('navigation', { name: 'Workspaces' })
      .getByRole('button', { name: `Harbour on ${hostId}` })
      .waitFor();
    await p.getByText(`Hosted on ${hostId}`).waitFor();
    // Every request went to her own server; the host's answers came through its relay route.
    const origins = new Set(aliceRequests.map((r) => new URL(r.url()).host));
    expect([...origins]).toEqual([`127.0.0.1:${relay.port}`]);
    expect(aliceRequests.some((r) => r.url().includes(`/api/remote/${hostId}/api`))).toBe(true);
    const joined = aliceRequests.find(
      (r) =>
        r.url().endsWith(`/api/remote/${hostId}/api`) && r.postData()?.includes('joinWorkspace'),
    );
    expect(joined?.headers()['svc-device-request']).toBeTruthy();
    expect(joined?.headers()['svc-device-signature']).toBeTruthy();
    await shot(p, 'remote-01-joined');
    await checkA11y(p, 'a workspace on another server');
  });

  it('is listed by her server, so a browser that forgot the host still shows it', async () => {
    const p = alice.page;
    // What this browser remembered of her hosts is gone (another browser holds none of it).
    await p.evaluate(() => {
      for (const k of Object.keys(localStorage)) {
        if (k.startsWith('svc-remote-hosts:')) localStorage.removeItem(k);
      }
    });
    await p.reload();
    await p
      .getByRole('navigation', { name: 'Workspaces' })
      .getByRole('button', { name: `Harbour on ${hostId}` })
      .click({ timeout: 20_000 });
    await p.getByRole('heading', { name: '#general' }).waitFor({ timeout: 20_000 });
  });

  it('delivers messages live both ways', async () => {
    await bob.page.getByRole('heading', { name: '#general' }).waitFor();
    await send(alice.page, 'Hello from the other server');
    await timeline(bob.page).getByText('Hello from the other server').waitFor({ timeout: 15_000 });
    // Bob's page names her as the host knows her: alice@<relay>.
    await send(bob.page, 'Welcome, Alice');
    // Through the host's events to her relay, and relayStream to her page.
    await timeline(alice.page).getByText('Welcome, Alice').waitFor({ timeout: 20_000 });
    await timeline(alice.page).getByText('Bob').first().waitFor();
  });

  it('searches the workspace on its host, through her server', async () => {
    const p = alice.page;
    const before = aliceRequests.length;
    await p.keyboard.press('Control+Shift+F');
    const dialog = p.getByRole('dialog', { name: `Search Harbour on ${hostId}` });
    await dialog.getByLabel('Words to find').fill('welcome');
    await dialog.getByRole('button', { name: 'Search', exact: true }).click();
    const hit = dialog.getByRole('list', { name: 'Messages found' }).getByRole('button');
    await hit.getByText('Welcome', { exact: true }).waitFor({ timeout: 15_000 });
    expect(await hit.count()).toBe(1);
    // The query went to the host through the relay route, signed by her browser's device key.
    const asked = aliceRequests.slice(before).find((r) => r.postData()?.includes('searchMessages'));
    expect(asked?.url()).toBe(`${relay.url}/api/remote/${hostId}/api`);
    expect(asked?.headers()['svc-device-signature']).toBeTruthy();
    await checkA11y(p, 'searching a workspace on another server');
    // Choosing it opens the message there.
    await hit.click();
    await p.locator('article.msg.found', { hasText: 'Welcome, Alice' }).waitFor();
  });

  it('shows reactions and thread replies, and the members', async () => {
    const msg = alice.page.locator('article.msg', { hasText: 'Welcome, Alice' });
    await msg.hover();
    await msg.getByRole('button', { name: 'Add a reaction' }).click();
    await alice.page.getByRole('searchbox', { name: 'Search emoji' }).fill('thumbs');
    await alice.page.keyboard.press('Enter');
    await alice.page.getByRole('button', { name: /👍 1/ }).waitFor();
    await bob.page.getByRole('button', { name: /👍 1/ }).waitFor({ timeout: 15_000 });

    const b = bob.page.locator('article.msg', { hasText: 'Hello from the other server' });
    await b.hover();
    await b.getByRole('button', { name: 'Reply in thread' }).click();
    await bob.page.getByRole('complementary', { name: 'Thread' }).waitFor();
    await bob.page.locator('#thread-input').fill('A reply from the host');
    await bob.page.locator('#thread-input').press('Enter');
    await bob.page
      .getByRole('log', { name: 'Replies in the thread' })
      .getByText('A reply from the host')
      .waitFor();
    await bob.page.getByRole('button', { name: 'Close thread' }).click();
    await alice.page.getByRole('button', { name: /1 reply/ }).click({ timeout: 20_000 });
    await alice.page
      .getByRole('log', { name: 'Replies in the thread' })
      .getByText('A reply from the host')
      .waitFor();
    await alice.page.getByRole('button', { name: 'Close thread' }).click();

    await alice.page.getByRole('button', { name: /^Members \(/ }).click();
    await alice.page
      .getByRole('complementary', { name: 'Members' })
      .getByText('Bob')
      .first()
      .waitFor();
    await alice.page.keyboard.press('Escape');
  });

  it('sends and shows files through the relay', async () => {
    const a = alice.page;
    await a
      .locator('[data-testid=attach-input]')
      .setInputFiles([
        { name: 'from-alice.txt', mimeType: 'text/plain', buffer: Buffer.from('sent through A\n') },
      ]);
    await expect
      .poll(() => a.getByRole('list', { name: 'Files to send' }).getByText('ready').count(), {
        timeout: 15_000,
      })
      .toBe(1);
    await send(a, 'A file from the relay side');
    const atBob = timeline(bob.page).locator('article.msg', {
      hasText: 'A file from the relay side',
    });
    const href = await atBob
      .getByRole('link', { name: /from-alice\.txt/ })
      .getAttribute('href', { timeout: 15_000 });
    expect(await bob.page.evaluate(async (u) => (await fetch(u)).text(), href ?? '')).toBe(
      'sent through A\n',
    );

    await bob.page
      .locator('[data-testid=attach-input]')
      .first()
      .setInputFiles([
        { name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('the plan, in words\n') },
        { name: 'square.png', mimeType: 'image/png', buffer: await square('#3366ff', 96) },
      ]);
    await expect
      .poll(
        () => bob.page.getByRole('list', { name: 'Files to send' }).getByText('ready').count(),
        {
          timeout: 15_000,
        },
      )
      .toBe(2);
    await send(bob.page, 'Files from the host');
    const atAlice = timeline(a).locator('article.msg', { hasText: 'Files from the host' });
    // The image through the relay's download route, checked, shown from a blob: address.
    const img = atAlice.getByRole('img', { name: 'square.png' });
    await img.waitFor({ timeout: 20_000 });
    await expect
      .poll(() => img.evaluate((el) => (el as HTMLImageElement).naturalWidth), { timeout: 10_000 })
      .toBe(96);
    expect(await img.getAttribute('src')).toMatch(/^blob:/);
    const saving = a.waitForEvent('download');
    await atAlice.getByRole('link', { name: /notes\.txt/ }).click();
    const file = await saving;
    expect(file.suggestedFilename()).toBe('notes.txt');
    expect(fs.readFileSync(await file.path()).toString('utf8')).toBe('the plan, in words\n');
    await shot(a, 'remote-02-files');
  });

  it('refuses an answer altered between the relay and the page', async () => {
    const p = alice.page;
    // A man in the middle on the page's side: the host's signed answer to sendMessage, altered.
    await p.route(`**/api/remote/${hostId}/api`, async (route) => {
      if (!route.request().postData()?.includes('sendMessage')) return route.fallback();
      const res = await route.fetch();
      const body = (await res.text()).replace('Altered on the way', 'FORGED');
      await route.fulfill({ response: res, body });
    });
    await composer(p).fill('Altered on the way');
    await composer(p).press('Enter');
    await p
      .getByText(
        new RegExp(`${esc(hostId)} could not be reached, or its answer could not be verified`),
      )
      .first()
      .waitFor({ timeout: 15_000 });
    expect(await composer(p).inputValue()).toBe('Altered on the way');
    await p.unroute(`**/api/remote/${hostId}/api`);
    expect(await timeline(p).getByText('FORGED').count()).toBe(0);
    await composer(p).fill('');
  });

  it('says how long to wait when the host limits the person', async () => {
    const p = alice.page;
    // Five messages a minute: a few more in a row meet the host's limit.
    let refused = false;
    for (let i = 1; i <= 8 && !refused; i++) {
      await composer(p).fill(`Quick message ${i}`);
      await composer(p).press('Enter');
      const shown = p.getByText(
        new RegExp(`${esc(hostId)}, which hosts this workspace, asks to slow down`),
      );
      const sent = timeline(p).getByText(`Quick message ${i}`, { exact: true });
      await shown.or(sent).first().waitFor({ timeout: 15_000 });
      refused = (await shown.count()) > 0;
    }
    expect(refused).toBe(true);
    await p
      .getByText(/Wait \d+ seconds? and try again/)
      .first()
      .waitFor();
    await composer(p).fill('');
  });

  it('says in words when the host cannot be reached', async () => {
    await host.stop();
    await composer(alice.page).fill('Is anyone there?');
    await composer(alice.page).press('Enter');
    await alice.page
      .getByText(new RegExp(`${esc(hostId)} could not be reached`))
      .first()
      .waitFor({ timeout: 20_000 });
    // The text stays in the box to send again.
    expect(await composer(alice.page).inputValue()).toBe('Is anyone there?');
    await shot(alice.page, 'remote-03-host-down');
    await host.boot();
  });

  it('stops asking a host she has nothing on for a day, until it has something, or she joins it again', async () => {
    const p = alice.page;
    const hostRequests = () =>
      aliceRequests.filter((r) => r.url().includes(`/api/remote/${hostId}/`));
    const toHost = () => hostRequests().length;
    const last = () =>
      hostRequests()
        .slice(-2)
        .map((r) => `${r.url()} ${r.postData()?.slice(0, 60)}`)
        .join(' | ');
    const rail = () => p.getByRole('navigation', { name: 'Workspaces' });
    const harbour = () => rail().getByRole('button', { name: `Harbour on ${hostId}` });
    /** Reloads her app and waits for the load's last read (the notification count). */
    const reload = async () => {
      const loaded = p.waitForRequest((r) => !!r.postData()?.includes('UnreadNotifications'), {
        timeout: 30_000,
      });
      await p.reload();
      await loaded;
    };
    // Bob removes her from his workspace: the host has nothing for her any more.
    const aliceThere = accountIdAt(host, `alice@${new URL(relay.url).host}`);
    const mine = await apiAt(bob.page, '{ myWorkspaces { id name } }', {});
    const space = mine.data.myWorkspaces.find((w: { name: string }) => w.name === 'Harbour');
    const removed = await apiAt(
      bob.page,
      'mutation($s: ID!, $u: ID!) { removeWorkspaceMember(serverId: $s, userId: $u) }',
      { s: space.id, u: aliceThere },
    );
    expect(removed.errors).toBeUndefined();
    await reload();
    expect(await harbour().count()).toBe(0);
    // The host answered every list with nothing: the next load does not ask it.
    const before = toHost();
    await reload();
    await rail()
      .getByRole('button', { name: /^Direct messages/ })
      .waitFor();
    expect(toHost(), last()).toBe(before);
    // A day later it is asked again (the mark moved back a day here), and found quiet again.
    await p.evaluate(() => {
      for (const key of Object.keys(localStorage)) {
        if (!key.startsWith('svc-remote-quiet:')) continue;
        const quiet = JSON.parse(localStorage.getItem(key)!) as Record<string, number>;
        for (const host of Object.keys(quiet))
          quiet[host] = (quiet[host] ?? 0) - 25 * 60 * 60 * 1000;
        localStorage.setItem(key, JSON.stringify(quiet));
      }
    });
    const dayLater = toHost();
    await reload();
    expect(toHost()).toBeGreaterThan(dayLater);
    const askedAgain = toHost();
    await reload();
    expect(toHost(), last()).toBe(askedAgain);

    // Bob writes to her: the host keeps a DM request for her, its event wakes the host, and her
    // page reads it again and lists the request.
    const started = await apiAt(
      bob.page,
      `mutation($m: [ID!]!) { createConversation(input: { memberIds: $m }) {
        conversation { id } dmRequestsSent { id } } }`,
      { m: [aliceThere] },
    );
    expect(started.errors).toBeUndefined();
    expect(started.data.createConversation.dmRequestsSent).toHaveLength(1);
    await openDirect(p);
    await p.getByRole('button', { name: 'Message requests (1)' }).waitFor({ timeout: 20_000 });

    // A new invite: joining wakes the host, and the loads ask it again.
    await bob.page.reload();
    await bob.page.getByRole('heading', { name: '#general' }).waitFor({ timeout: 20_000 });
    const again = await createInviteLink(bob.page);
    await p.getByRole('button', { name: 'Create or join a workspace' }).click();
    await p.getByRole('dialog').getByLabel('Invite link or code').fill(again);
    await p.getByRole('button', { name: 'Join', exact: true }).click();
    await harbour().waitFor({ timeout: 20_000 });
    const joined = toHost();
    await reload();
    await harbour().waitFor({ timeout: 20_000 });
    expect(toHost()).toBeGreaterThan(joined);
  });

  it('leaves no page errors or policy violations', () => {
    expect(alice.problems).toEqual([]);
    expect(bob.problems).toEqual([]);
  });
});
