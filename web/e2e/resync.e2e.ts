/// <reference lib="dom" />
// The resync signal in the web client (docs/events.md, "What a subscriber sees when Redis or a
// process fails"): two server processes on one PostgreSQL and one Redis, process B reaching Redis
// through a proxy the test cuts. Bob sends through A while B cannot hear Redis, so B's
// subscribers miss that message; once B is back it ends every live subscription (`complete`).
// Alice's client, on B, must keep the workspace, subscribe again and read again what it shows:
// the missed message appears, and the next one arrives live. Needs PostgreSQL and Redis (the CI
// has both); skipped without them.
import type { Browser, Page } from 'playwright-core';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { FaultProxy } from '../../test/_util/fault-proxy.js';
import { redisTestPrefix } from '../../test/_util/redis.js';
import { gql, login, PASSWORD, type Session } from '../../test/_util/server-process.js';
import { assertBuilt, launchBrowser, personPage, TestServer } from './harness.js';

const PG_URL = process.env.SVC_TEST_DATABASE_URL;
const REDIS_URL = process.env.SVC_TEST_REDIS_URL;
const SKIP =
  PG_URL && REDIS_URL
    ? ''
    : ' (skipped: needs SVC_TEST_DATABASE_URL (PostgreSQL) and SVC_TEST_REDIS_URL)';

const SEND = `mutation($c: ID!, $t: String!) { sendMessage(input: { conversationId: $c, text: $t }) { id } }`;

describe.skipIf(!PG_URL || !REDIS_URL)(`the web client told to resync${SKIP}`, () => {
  const schema = `e2e_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`;
  let proxy: FaultProxy;
  let a: TestServer;
  let b: TestServer;
  let browser: Browser;
  let page: Page;
  let problems: string[];
  let bob: Session;
  let general = '';
  let random = '';
  let serverId = '';
  let aliceId = '';
  /** The `workspaceEvents` subscribe messages Alice's client sent, with when. */
  const subscribes: number[] = [];

  const timeline = () => page.getByRole('log', { name: /^Messages in/ });
  const send = async (text: string) => {
    const res = await gql({ base: a.url }, bob, SEND, { c: general, t: text });
    expect(res.errors).toBeUndefined();
  };

  beforeAll(async () => {
    assertBuilt();
    const admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
    await admin.query(`create schema ${schema}`);
    await admin.end();
    const db = new URL(PG_URL!);
    db.searchParams.set('options', `-c search_path=${schema}`);
    const redis = new URL(REDIS_URL!);
    proxy = await FaultProxy.start(redis.hostname, Number(redis.port || 6379));
    const shared = {
      SVC_DATABASE_URL: db.toString(),
      SVC_REDIS_PREFIX: redisTestPrefix(),
      SVC_REDIS_TIMEOUT_MS: '500',
    };
    // One after the other: the first boot migrates the schema and makes the server keys.
    a = await TestServer.start({ ...shared, SVC_REDIS_URL: REDIS_URL! });
    b = await TestServer.start({ ...shared, SVC_REDIS_URL: proxy.rewrite(REDIS_URL!) });
    for (const name of ['bob', 'alice']) {
      a.cli(['account', 'create', name, '--password-stdin'], `${PASSWORD}\n`);
    }
    bob = await login({ base: a.url }, 'bob');
    const created = await gql(
      { base: a.url },
      bob,
      'mutation { createWorkspace(input: { name: "Outage" }) { id channels { id name } } }',
    );
    const workspace = created.data.createWorkspace;
    serverId = workspace.id;
    general = workspace.channels.find((c: { name: string }) => c.name === 'general').id;
    random = workspace.channels.find((c: { name: string }) => c.name === 'random').id;
    const invite = await gql(
      { base: a.url },
      bob,
      'mutation($s: ID!) { createWorkspaceInvite(input: { serverId: $s }) { token } }',
      { s: workspace.id },
    );
    const alice = await login({ base: b.url }, 'alice');
    const joined = await gql(
      { base: b.url },
      alice,
      'mutation($t: String!) { joinWorkspace(token: $t) { id } }',
      { t: invite.data.createWorkspaceInvite.token },
    );
    expect(joined.errors).toBeUndefined();
    aliceId = (await gql({ base: b.url }, alice, '{ me { id } }')).data.me.id;

    browser = await launchBrowser();
    ({ page, problems } = await personPage(browser, b.url));
    page.on('websocket', (ws) =>
      ws.on('framesent', ({ payload }) => {
        if (String(payload).includes('"subscribe"') && String(payload).includes(serverId)) {
          subscribes.push(Date.now());
        }
      }),
    );
    await page.goto('/');
    await page.getByLabel('Username').fill('alice');
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('button', { name: /^Outage/ }).click();
    await page.getByRole('link', { name: /general/ }).click();
    await page.getByRole('heading', { name: '#general' }).waitFor();
  });

  afterAll(async () => {
    await browser?.close();
    await proxy?.pass();
    await Promise.all([a?.dispose(), b?.dispose()]);
    await proxy?.close();
    const admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
    await admin.query(`drop schema if exists ${schema} cascade`);
    await admin.end();
  });

  it('shows what it missed, keeps the workspace and gets the next message live', async () => {
    await send('before the cut');
    await timeline().getByText('before the cut').waitFor({ timeout: 10_000 });

    // B cannot hear Redis: what A publishes meanwhile never reaches B's subscribers.
    await proxy.refuse();
    await send('sent while B could not hear Redis');
    await new Promise((r) => setTimeout(r, 500));
    expect(await timeline().getByText('sent while B could not hear Redis').count()).toBe(0);

    // Back: B ends Alice's subscriptions, her client subscribes again and reads again.
    await proxy.pass();
    await timeline().getByText('sent while B could not hear Redis').waitFor({ timeout: 15_000 });
    await page.getByRole('button', { name: /^Outage/ }).waitFor({ timeout: 5_000 });

    // Live again: the next message arrives without another reread.
    await expect
      .poll(
        async () => {
          await send(`after the cut ${Date.now()}`);
          return timeline()
            .getByText(/^after the cut/)
            .count();
        },
        { timeout: 15_000, interval: 1_000 },
      )
      .toBeGreaterThan(0);
    expect(problems).toEqual([]);
  });

  it('keeps an unread count moved live while it reads everything again', async () => {
    const randomLink = () => page.getByRole('link', { name: /^#random\b/ });
    expect(await randomLink().getAttribute('aria-label')).not.toMatch(/unread/);
    // The read of every list after the resync is answered at once (nothing unread in #random)
    // and reaches the page only after a message to #random has arrived live.
    const isListRead = (postData: string | null) => !!postData?.includes('query Inbox');
    let release = () => {};
    const released = new Promise<void>((r) => (release = r));
    let answered = false;
    let held = 0;
    await page.route('**/api', async (route) => {
      if (!isListRead(route.request().postData()) || held++ > 0) return route.fallback();
      const answer = await route.fetch();
      answered = true;
      await released;
      await route.fulfill({ response: answer });
    });
    try {
      const resubscribed = subscribes.length;
      await proxy.refuse();
      await send('missed while reading');
      await new Promise((r) => setTimeout(r, 500));
      await proxy.pass();
      await expect.poll(() => answered, { timeout: 15_000 }).toBe(true);
      await expect.poll(() => subscribes.length, { timeout: 15_000 }).toBeGreaterThan(resubscribed);
      // Live again (sent until one arrives: the subscription may still be on its way).
      await expect
        .poll(
          async () => {
            const res = await gql({ base: a.url }, bob, SEND, { c: random, t: 'in random' });
            expect(res.errors).toBeUndefined();
            return randomLink().getAttribute('aria-label');
          },
          { timeout: 15_000, interval: 1_000 },
        )
        .toMatch(/\d+ unread/);
      // The lists' read ends with the read of the notification count: by then it is applied.
      const applied = page.waitForRequest((r) => !!r.postData()?.includes('UnreadNotifications'));
      release();
      await applied;
      await timeline().getByText('missed while reading').waitFor({ timeout: 15_000 });
      expect(await randomLink().getAttribute('aria-label')).toMatch(/\d+ unread/);
    } finally {
      release();
      await page.unroute('**/api');
    }
    expect(problems).toEqual([]);
  });

  it('drops a workspace it was removed from while the event was missed, and stops asking', async () => {
    await proxy.refuse();
    const removed = await gql(
      { base: a.url },
      bob,
      'mutation($s: ID!, $u: ID!) { removeWorkspaceMember(serverId: $s, userId: $u) }',
      { s: serverId, u: aliceId },
    );
    expect(removed.errors).toBeUndefined();
    await proxy.pass();
    await page
      .getByRole('button', { name: /^Outage/ })
      .waitFor({ state: 'detached', timeout: 15_000 });
    // Subscribing again was refused (NOT_FOUND): the client does not try again.
    const asked = subscribes.length;
    await new Promise((r) => setTimeout(r, 2_000));
    expect(subscribes.length).toBe(asked);
    expect(problems).toEqual([]);
  });
});
