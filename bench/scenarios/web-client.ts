/// <reference lib="dom" />
// The web client in Debian's Chromium against a local server process: the compressed script of
// the signed-in app's first load, the time to open a channel of 50 messages, and scrolling back
// through a channel of 10,000 messages (how many pages load, how many messages the page holds);
// then the encrypted path in the same run (./web-client-encrypted.ts).
import { gql, signup, type Session } from '../lib/client.js';
import { percentile } from '../lib/proc.js';
import type { ScenarioResult } from '../lib/report.js';
import { SEND } from '../lib/setup.js';
import { assertBuilt, launchBrowser, TestServer } from '../../web/e2e/harness.js';

import { encryptedWebClient } from './web-client-encrypted.js';

const PASSWORD = 'bench password 1234';
const OPENS = 7;
const SCROLL_STEPS = 40;

async function fill(base: string, s: Session, conversationId: string, n: number): Promise<void> {
  // 100 aliased sends per request (the document limit on aliases), 4 requests at a time.
  const per = 100;
  const docs: string[] = [];
  for (let i = 0; i < n; i += per) {
    const k = Math.min(per, n - i);
    const fields = Array.from(
      { length: k },
      (_, j) =>
        `m${j}: sendMessage(input: { conversationId: "${conversationId}", text: "Message ${i + j + 1} of ${n}: the quick brown fox jumps over the lazy dog." }) { id }`,
    );
    docs.push(`mutation { ${fields.join(' ')} }`);
  }
  for (let i = 0; i < docs.length; i += 4) {
    await Promise.all(docs.slice(i, i + 4).map((d) => gql(base, d, {}, s)));
  }
}

export async function webClient(): Promise<ScenarioResult> {
  assertBuilt();
  const server = await TestServer.start({
    SVC_OPEN_REGISTRATION: 'true',
    SVC_SIGNUP_REQUIRE_KEYS: 'false',
    // The encrypted part's people write through the app, one message after another.
    SVC_RATE_MESSAGES_PER_MIN_PER_USER: '100000',
    SVC_RATE_MUTATIONS_PER_MIN_PER_SESSION: '100000',
  });
  const browser = await launchBrowser();
  try {
    const base = server.url;
    const s = await signup(base, 'reader', PASSWORD);
    const ws = await gql(
      base,
      'mutation { createWorkspace(input: { name: "Bench" }) { id } }',
      {},
      s,
    );
    const serverId = ws.data.createWorkspace.id as string;
    const mk = async (name: string) =>
      (
        await gql(
          base,
          'mutation($i: CreateChannelInput!) { createChannel(input: $i) { id } }',
          { i: { serverId, name } },
          s,
        )
      ).data.createChannel.id as string;
    const fifty = await mk('fifty');
    const long = await mk('long');
    await fill(base, s, fifty, 50);
    const seedStart = performance.now();
    await fill(base, s, long, 10_000);
    const seedSeconds = (performance.now() - seedStart) / 1000;
    await gql(base, SEND, { i: { conversationId: fifty, text: 'last' } }, s);

    const context = await browser.newContext({
      baseURL: base,
      viewport: { width: 1280, height: 900 },
    });
    const page = await context.newPage();
    const scripts = new Set<string>();
    page.on('request', (r) => {
      if (r.resourceType() === 'script') scripts.add(new URL(r.url()).pathname);
    });
    await page.goto('/');
    await page.getByLabel('Username').fill('reader');
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('navigation', { name: 'Workspaces' }).waitFor();

    // First load: every script the signed-in app fetched, as sent compressed.
    let gzip = 0;
    let br = 0;
    let raw = 0;
    for (const p of scripts) {
      for (const enc of ['gzip', 'br', 'identity'] as const) {
        // fetch() decodes the body; Content-Length is the size sent over the wire.
        const r = await fetch(`${base}${p}`, { headers: { 'accept-encoding': enc } });
        await r.arrayBuffer();
        const n = Number(r.headers.get('content-length'));
        if (enc === 'gzip') gzip += n;
        else if (enc === 'br') br += n;
        else raw += n;
      }
    }

    // Opening the channel of 50 (plus one) messages: click to the last message on screen, in a
    // freshly loaded app each time (nothing cached in the page).
    const opens: number[] = [];
    // Of each open: until the last API answer arrived (the rest is the page's own work).
    const apiWait: number[] = [];
    // Time the page's main thread spent in tasks (script, style, layout, paint) during each open:
    // the client's own share, apart from waiting for the API.
    const cdp = await context.newCDPSession(page);
    await cdp.send('Performance.enable');
    const cpu = async () => {
      const m = (await cdp.send('Performance.getMetrics')).metrics;
      return m.find((x) => x.name === 'TaskDuration')?.value ?? 0;
    };
    const openCpu: number[] = [];
    for (let i = 0; i < OPENS; i++) {
      await page.goto(`/w/${serverId}/${long}`);
      await page
        .getByRole('log', { name: 'Messages in #long' })
        .locator('article.msg')
        .first()
        .waitFor();
      // A string, not a function: the TypeScript runner would wrap named functions in helpers
      // that do not exist in the page.
      const cpuBefore = await cpu();
      const ms = (await page.evaluate(`(async (target) => {
        const link = Array.from(document.querySelectorAll('a.conv')).find((a) => a.href.endsWith(target));
        if (!link) throw new Error('no link to the channel');
        const t0 = performance.now();
        link.click();
        await new Promise((resolve) => {
          const done = () =>
            document.querySelector('[aria-label="Messages in #fifty"] article.msg:last-of-type .text')
              ?.textContent === 'last';
          if (done()) return resolve(null);
          const mo = new MutationObserver(() => {
            if (done()) {
              mo.disconnect();
              resolve(null);
            }
          });
          mo.observe(document.body, { childList: true, subtree: true, characterData: true });
        });
        await new Promise((r) => requestAnimationFrame(() => r(null)));
        const total = performance.now() - t0;
        const api = performance
          .getEntriesByType('resource')
          .filter((e) => e.name.endsWith('/api') && e.startTime >= t0)
          .reduce((end, e) => Math.max(end, e.responseEnd - t0), 0);
        return [total, api];
      })(${JSON.stringify(`/${fifty}`)})`)) as [number, number];
      opens.push(ms[0]);
      apiWait.push(ms[1]);
      openCpu.push((await cpu()) - cpuBefore);
    }

    // The channel of 10,000: scroll to the top again and again; count the pages fetched and
    // the messages in the page.
    await page.goto(`/w/${serverId}/${long}`);
    const log = page.getByRole('log', { name: 'Messages in #long' });
    await log.locator('article.msg').first().waitFor();
    let pageQueries = 0;
    page.on('request', (r) => {
      if (r.url().endsWith('/api') && (r.postData() ?? '').includes('query Messages'))
        pageQueries++;
    });
    const inPage: number[] = [];
    const stepMs: number[] = [];
    for (let i = 0; i < SCROLL_STEPS; i++) {
      const t0 = performance.now();
      const before = pageQueries;
      await log.evaluate((el) => (el.scrollTop = 0));
      while (pageQueries === before && performance.now() - t0 < 5000) await page.waitForTimeout(10);
      await page.waitForFunction(() => !document.querySelector('[role="log"][aria-busy="true"]'));
      stepMs.push(performance.now() - t0);
      inPage.push(await log.locator('article.msg').count());
    }
    const oldest = await log.locator('article.msg .text').first().textContent();
    const heapMb = await page.evaluate(
      () =>
        ((performance as unknown as { memory?: { usedJSHeapSize: number } }).memory
          ?.usedJSHeapSize ?? 0) /
        2 ** 20,
    );
    await context.close();
    const enc = await encryptedWebClient(browser, base);

    const median = percentile(opens, 50);
    const maxInPage = Math.max(...inPage);
    return {
      scenario: 'web-client',
      database: 'sqlite',
      rows: [
        { measure: 'first load: script files', value: scripts.size, unit: 'files' },
        { measure: 'first load: script, raw', value: Math.round(raw / 1024), unit: 'KiB' },
        { measure: 'first load: script, gzip', value: Math.round(gzip / 1024), unit: 'KiB' },
        { measure: 'first load: script, brotli', value: Math.round(br / 1024), unit: 'KiB' },
        { measure: 'open channel of 51: median', value: median, unit: 'ms' },
        { measure: 'open channel of 51: max', value: Math.max(...opens), unit: 'ms' },
        {
          measure: 'open channel of 51: of which API, median',
          value: percentile(apiWait, 50),
          unit: 'ms',
        },
        {
          measure: 'open channel of 51: page main-thread time, median',
          value: percentile(openCpu, 50) * 1000,
          unit: 'ms',
        },
        { measure: `10,000 messages: scroll steps to the top`, value: SCROLL_STEPS, unit: 'steps' },
        { measure: '10,000 messages: pages fetched', value: pageQueries, unit: 'queries' },
        {
          measure: '10,000 messages: most messages in the page',
          value: maxInPage,
          unit: 'messages',
        },
        {
          measure: '10,000 messages: page load, median',
          value: percentile(stepMs, 50),
          unit: 'ms',
        },
        { measure: '10,000 messages: JS heap after', value: heapMb, unit: 'MiB' },
        { measure: 'seeding 10,000 messages', value: seedSeconds, unit: 's' },
        ...enc.rows,
      ],
      targets: [
        {
          target: 'first load at most 150 KiB of gzip script',
          met: gzip <= 150 * 1024,
          detail: `${(gzip / 1024).toFixed(1)} KiB gzip, ${(br / 1024).toFixed(1)} KiB brotli in ${scripts.size} file(s)`,
        },
        {
          target: 'opening a channel of 50 messages under 300 ms',
          met: median < 300,
          detail: `median ${median.toFixed(0)} ms of ${OPENS} (API answers ${percentile(apiWait, 50).toFixed(0)} ms of it; the page's main thread busy ${(percentile(openCpu, 50) * 1000).toFixed(0)} ms), max ${Math.max(...opens).toFixed(0)} ms`,
        },
        {
          target: 'a channel of 10,000 messages scrolls without loading them all',
          met: pageQueries <= SCROLL_STEPS + 1 && maxInPage <= 400,
          detail: `${pageQueries} pages of 50 fetched for ${SCROLL_STEPS} scrolls; at most ${maxInPage} messages in the page; oldest shown: "${oldest ?? ''}"`,
        },
        ...enc.targets,
      ],
      notes: [
        'Chromium headless on this machine, server on loopback, SQLite; timings include rendering.',
      ],
    };
  } finally {
    await browser.close();
    await server.dispose();
  }
}
