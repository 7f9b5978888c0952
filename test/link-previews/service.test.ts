import type http from 'node:http';
import net from 'node:net';
import { fileURLToPath } from 'node:url';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import {
  createTestApp,
  createTestDatabase,
  type Agent,
  type TestApp,
  type TestDatabase,
} from '../_util/app.js';
import { signUpAndIn } from '../_util/seed.js';
import { send } from '../conversations/_helpers.js';
import { createWorkspace, ok, recordEvents } from '../workspaces/_helpers.js';

import { startCanaries, startDns, startHttp } from './_netns-env.js';
import { IN_NETNS, netnsUnavailable, runVitestInNetns } from './_netns.js';

// Link previews end to end (docs/link-previews.md): a real app on the test database, page
// servers on public-looking addresses, a DNS server and canaries, all inside a network namespace
// of this file's own. Outside the namespace the file only starts itself inside one.

const skip = netnsUnavailable();

if (!IN_NETNS) {
  describe.skipIf(skip !== null)(`link previews${skip ? ` (skipped: ${skip})` : ''}`, () => {
    it('pass inside a network namespace of their own', async () => {
      const run = await runVitestInNetns(fileURLToPath(import.meta.url));
      expect(run.code, run.output).toBe(0);
      // Every test ran, on this project's database.
      // eslint-disable-next-line no-control-regex
      const output = run.output.replace(/\x1b\[[0-9;]*m/g, '');
      expect(output).toMatch(/Tests\s+8 passed \(8\)/);
      expect(output).toContain(` ${process.env.SVC_TEST_DB ?? 'sqlite'} `);
    }, 180_000);
  });
} else {
  const PREVIEWS = `query($c: ID!) { messages(conversationId: $c) { items { id text
    linkPreviews { url kind title description imageUrl siteName mimeType size } } } }`;
  const EDIT = 'mutation($m: ID!, $t: String!) { editMessage(messageId: $m, text: $t) { id } }';
  const DELETE = 'mutation($m: ID!) { deleteMessage(messageId: $m) { id } }';
  const page = (title: string, extra = '') =>
    `<html><head><title>${title}</title>${extra}</head><body></body></html>`;

  const hits = new Map<string, number>();
  let active = 0;
  let maxActive = 0;
  let publicCanary = 0;
  let canaries: Awaited<ReturnType<typeof startCanaries>>;
  const servers: Array<{ close: () => void }> = [];

  const handler: http.RequestListener = (req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    hits.set(path, (hits.get(path) ?? 0) + 1);
    if (path === '/hang') return;
    active++;
    maxActive = Math.max(maxActive, active);
    const done = () => active--;
    if (path.startsWith('/slow/')) {
      setTimeout(() => {
        res.writeHead(200, { 'content-type': 'text/html' }).end(page(`Slow ${path.slice(6)}`));
        done();
      }, 600);
      return;
    }
    if (path === '/img.png') {
      res.writeHead(200, { 'content-type': 'image/png' }).end(Buffer.alloc(2048));
    } else if (path === '/og') {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(
        page(
          'Plain',
          `<meta property="og:title" content="Alpha"><meta property="og:description" content="About alpha">
           <meta property="og:image" content="/img.png"><meta property="og:site_name" content="Example">`,
        ),
      );
    } else if (path === '/sjis') {
      res.writeHead(200, { 'content-type': 'text/html; charset=Shift_JIS' });
      // 日本 in Shift_JIS
      res.end(
        Buffer.concat([
          Buffer.from('<title>'),
          Buffer.from([0x93, 0xfa, 0x96, 0x7b]),
          Buffer.from('</title>'),
        ]),
      );
    } else {
      res.writeHead(200, { 'content-type': 'text/html' }).end(page(`Page ${path.slice(1)}`));
    }
    done();
  };

  beforeAll(async () => {
    servers.push(
      await startDns({
        'www.example-site.com': ['93.184.216.34'],
        'other.example-site.com': ['151.101.1.1'],
        'private.example-site.com': ['10.0.0.5'],
      }),
    );
    canaries = await startCanaries();
    servers.push(canaries);
    servers.push(await startHttp('93.184.216.34', 80, handler));
    const pub = net.createServer((c) => {
      publicCanary++;
      c.destroy();
    });
    await new Promise<void>((resolve) => pub.listen(80, '151.101.1.1', resolve));
    servers.push(pub);
  });
  afterAll(() => {
    for (const s of servers) s.close();
  });

  async function channelOf(t: TestApp, name: string) {
    const agent = await signUpAndIn(t, { username: name });
    const serverId = (await createWorkspace(t, agent, `W ${name}`)).id;
    const channels = ok(
      await t.gql('query($s: ID!) { channels(serverId: $s) { id name } }', { s: serverId }, agent),
    ).channels as Array<{ id: string; name: string }>;
    return { agent, serverId, general: channels.find((c) => c.name === 'general')!.id };
  }

  async function previewsOf(t: TestApp, agent: Agent, conv: string, id: string) {
    const items = ok(await t.gql(PREVIEWS, { c: conv }, agent)).messages.items as Array<
      Record<string, any>
    >;
    return items.find((m) => m.id === id)!.linkPreviews as Array<Record<string, any>>;
  }

  describe('link previews', () => {
    let t: TestApp;
    let a: Awaited<ReturnType<typeof channelOf>>;

    beforeAll(async () => {
      t = await createTestApp({
        env: { SVC_LINK_PREVIEW_CONCURRENCY: '2', SVC_LOG_LEVEL: 'debug' },
      });
      a = await channelOf(t, 'previewer');
    });
    afterAll(async () => t?.close());

    it('previews the first 5 distinct links after the send, without delaying it', async () => {
      const events = recordEvents(t, a.serverId);
      const text = [1, 2, 3, 1, 4, 5, 6]
        .map((n) => `http://www.example-site.com/slow/${n}`)
        .join(' ');
      const m = await send(t, a.agent, a.general, `look ${text}`);
      // The send answers without its previews: they are fetched after it (a send that waited for
      // them would carry them). How long it takes is the bench's to measure, not a test's.
      expect(m.linkPreviews).toEqual([]);
      await t.ctx.services.linkPreviews.idle();
      const previews = await previewsOf(t, a.agent, a.general, m.id);
      expect(previews.map((p) => p.title)).toEqual([
        'Slow 1',
        'Slow 2',
        'Slow 3',
        'Slow 4',
        'Slow 5',
      ]);
      expect(hits.get('/slow/6')).toBeUndefined();
      expect(hits.get('/slow/1')).toBe(1);
      // SVC_LINK_PREVIEW_CONCURRENCY=2: never more than two fetches at once.
      expect(maxActive).toBe(2);
      const updated = events.ofType('MessageUpdated');
      expect(updated).toHaveLength(1);
      expect(updated[0]!.payload).toMatchObject({
        messageId: m.id,
        conversationId: a.general,
        audience: { kind: 'channel', conversationId: a.general },
      });
      expect((updated[0]!.payload.linkPreviews as unknown[]).length).toBe(5);
      events.stop();
    });

    it('stores Open Graph fields, image previews and decoded charsets', async () => {
      const m = await send(
        t,
        a.agent,
        a.general,
        'http://www.example-site.com/og http://www.example-site.com/img.png http://www.example-site.com/sjis',
      );
      await t.ctx.services.linkPreviews.idle();
      expect(await previewsOf(t, a.agent, a.general, m.id)).toEqual([
        {
          url: 'http://www.example-site.com/og',
          kind: 'PAGE',
          title: 'Alpha',
          description: 'About alpha',
          imageUrl: 'http://www.example-site.com/img.png',
          siteName: 'Example',
          mimeType: null,
          size: null,
        },
        {
          url: 'http://www.example-site.com/img.png',
          kind: 'IMAGE',
          title: null,
          description: null,
          imageUrl: 'http://www.example-site.com/img.png',
          siteName: null,
          mimeType: 'image/png',
          size: 2048,
        },
        expect.objectContaining({ url: 'http://www.example-site.com/sjis', title: '日本' }),
      ]);
    });

    it('fetches a URL once for concurrent messages and serves it from the cache later', async () => {
      const url = 'http://www.example-site.com/slow/cached';
      await Promise.all([1, 2, 3].map(() => send(t, a.agent, a.general, url)));
      await t.ctx.services.linkPreviews.idle();
      expect(hits.get('/slow/cached')).toBe(1);
      const m = await send(t, a.agent, a.general, `again ${url}`);
      await t.ctx.services.linkPreviews.idle();
      expect(hits.get('/slow/cached')).toBe(1);
      expect((await previewsOf(t, a.agent, a.general, m.id))[0]?.title).toBe('Slow cached');
    });

    it('gives refused links no preview, logs why at debug, and never connects to them', async () => {
      const m = await send(
        t,
        a.agent,
        a.general,
        'http://127.0.0.1/ http://private.example-site.com/x http://[::ffff:10.0.0.5]/ http://169.254.169.254/latest',
      );
      await t.ctx.services.linkPreviews.idle();
      expect(await previewsOf(t, a.agent, a.general, m.id)).toEqual([]);
      expect(canaries.connections()).toBe(0);
      const refused = t.logs.lines.filter(
        (l) => l.msg === 'link preview not fetched' && l.reason === 'refusedAddress',
      );
      expect(refused.length).toBeGreaterThanOrEqual(4);
    });

    it('refreshes previews on edit and drops them on delete', async () => {
      const m = await send(t, a.agent, a.general, 'http://www.example-site.com/one');
      await t.ctx.services.linkPreviews.idle();
      expect((await previewsOf(t, a.agent, a.general, m.id)).map((p) => p.title)).toEqual([
        'Page one',
      ]);
      ok(await t.gql(EDIT, { m: m.id, t: 'now http://www.example-site.com/two' }, a.agent));
      await t.ctx.services.linkPreviews.idle();
      expect((await previewsOf(t, a.agent, a.general, m.id)).map((p) => p.title)).toEqual([
        'Page two',
      ]);
      const events = recordEvents(t, a.serverId);
      ok(await t.gql(EDIT, { m: m.id, t: 'no links now' }, a.agent));
      await t.ctx.services.linkPreviews.idle();
      expect(await previewsOf(t, a.agent, a.general, m.id)).toEqual([]);
      expect(events.ofType('MessageUpdated').map((e) => e.payload.linkPreviews)).toEqual([[]]);
      events.stop();

      const d = await send(t, a.agent, a.general, 'http://www.example-site.com/three');
      await t.ctx.services.linkPreviews.idle();
      ok(await t.gql(DELETE, { m: d.id }, a.agent));
      const rows = await t.ctx.db.kysely
        .selectFrom('link_preview')
        .selectAll()
        .where('messageId', '=', d.id)
        .execute();
      expect(rows).toEqual([]);
    });
  });

  describe('fetch slots', () => {
    it('drops a fetch that waits five seconds for a slot, with a log line', async () => {
      // One slot, held by a fetch given a longer budget than the slot wait.
      const t = await createTestApp({
        env: { SVC_LINK_PREVIEW_CONCURRENCY: '1' },
        overrides: { safeFetch: { timeoutMs: 7000 } },
      });
      try {
        const a = await channelOf(t, 'slots');
        const started = Date.now();
        const m = await send(
          t,
          a.agent,
          a.general,
          'http://www.example-site.com/hang http://www.example-site.com/waits',
        );
        await t.ctx.services.linkPreviews.idle();
        expect(Date.now() - started).toBeGreaterThanOrEqual(6900);
        expect(hits.get('/waits')).toBeUndefined();
        expect(await previewsOf(t, a.agent, a.general, m.id)).toEqual([]);
        expect(
          t.logs.find('link preview dropped: no fetch slot free within five seconds'),
        ).toMatchObject({
          url: 'http://www.example-site.com/waits',
        });
      } finally {
        await t.close();
      }
    }, 20_000);
  });

  describe('giving way to requests', () => {
    it('starts no fetch while requests keep the event loop busy, and all of them after', async () => {
      const t = await createTestApp({ env: { SVC_LINK_PREVIEW_CONCURRENCY: '4' } });
      let flooding = true;
      let flood: Promise<unknown> = Promise.resolve();
      try {
        const a = await channelOf(t, 'yielder');
        // Clients asking over real sockets, as fast as the server answers them. The question
        // needs no database, so the event loop stays busy on PostgreSQL too (there a request
        // that waits for the database leaves the loop idle meanwhile).
        await t.app.listen({ host: '127.0.0.1', port: 0 });
        const { port } = t.app.server.address() as net.AddressInfo;
        const read = () =>
          fetch(`http://127.0.0.1:${port}/api`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ query: '{ serverInfo { version features { key state } } }' }),
          }).then((r) => r.arrayBuffer());
        flood = Promise.all(
          Array.from({ length: 16 }, async () => {
            while (flooding) await read();
          }),
        );
        await new Promise((r) => setTimeout(r, 300));
        const paths = [1, 2, 3, 4].map((n) => `/slow/busy${n}`);
        const m = await send(
          t,
          a.agent,
          a.general,
          paths.map((p) => `http://www.example-site.com${p}`).join(' '),
        );
        await new Promise((r) => setTimeout(r, 1500));
        expect(paths.map((p) => hits.get(p) ?? 0)).toEqual([0, 0, 0, 0]);

        maxActive = 0;
        flooding = false;
        await flood;
        await t.ctx.services.linkPreviews.idle();
        // The requests gone, the waiting fetches start together, up to the concurrency.
        expect(maxActive).toBe(4);
        expect((await previewsOf(t, a.agent, a.general, m.id)).map((p) => p.title)).toEqual([
          'Slow busy1',
          'Slow busy2',
          'Slow busy3',
          'Slow busy4',
        ]);
      } finally {
        flooding = false;
        await flood;
        await t.close();
      }
    }, 20_000);
  });

  describe('the link_previews switch', () => {
    let database: TestDatabase;
    beforeAll(async () => {
      database = await createTestDatabase();
    });
    afterAll(async () => database?.drop());

    it('while off connects nowhere and serves no previews; stored ones come back when on', async () => {
      const on = await createTestApp({ database });
      const a = await channelOf(on, 'switcher');
      const m = await send(on, a.agent, a.general, 'http://www.example-site.com/kept');
      await on.ctx.services.linkPreviews.idle();
      expect((await previewsOf(on, a.agent, a.general, m.id)).map((p) => p.title)).toEqual([
        'Page kept',
      ]);
      await on.close();

      const off = await createTestApp({
        database,
        env: { SVC_FEATURES_DISABLED: 'link_previews' },
      });
      const n = await send(
        off,
        a.agent,
        a.general,
        'http://other.example-site.com/ http://www.example-site.com/off',
      );
      await off.ctx.services.linkPreviews.idle();
      await new Promise((r) => setTimeout(r, 300));
      expect(publicCanary).toBe(0);
      expect(hits.get('/off')).toBeUndefined();
      expect(await previewsOf(off, a.agent, a.general, m.id)).toEqual([]);
      expect(await previewsOf(off, a.agent, a.general, n.id)).toEqual([]);
      await off.close();

      const again = await createTestApp({ database });
      expect((await previewsOf(again, a.agent, a.general, m.id)).map((p) => p.title)).toEqual([
        'Page kept',
      ]);
      await again.close();
    });
  });
}
