import type net from 'node:net';

import { createClient, type Client } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';

import type { AppContext } from '../../src/context.js';
import {
  createMigratedContext,
  createTestDatabase,
  TEST_DB,
  type TestDatabase,
} from '../_util/app.js';
import { sleep } from '../_util/fault-proxy.js';
import { redisTestPrefix } from '../_util/redis.js';
import { gql, login, PASSWORD, type Session } from '../_util/server-process.js';
import { until, WORKSPACE_EVENTS } from '../realtime/_helpers.js';
import { forward, HostNode, makeHosts, namespacesUnavailable, type Host } from './_hosts.js';

// docs/operations.md, "Several machines": two svc nodes on two hosts, each a network namespace of
// its own with its own address, reaching PostgreSQL and Redis over the network (the machine's
// side of each host's link), sharing one data directory (shared storage), each with a wall
// clock of its own. A message's time, which orders a conversation, is the wall clock of the
// node that stored it. Checked: one instance served from both hosts (a session made on one
// used on the other, a file uploaded on one downloaded from the other); with the clocks as far
// apart as docs/operations.md allows (CLOCK_BOUND_MS), messages sent alternately through both
// nodes are all stored, all delivered live on both, and stored in the order they were sent; and
// the limit, measured: with one clock 2 s ahead, messages sent closer together than that are
// stored out of order (none is lost). Needs root, `ip netns`, PostgreSQL and Redis; skipped
// otherwise, with the reason in the test's name.

const REDIS_URL = process.env.SVC_TEST_REDIS_URL;
const PG_URL = process.env.SVC_TEST_DATABASE_URL;
const SKIP =
  TEST_DB !== 'postgres' || !REDIS_URL || !PG_URL
    ? ' (skipped: needs PostgreSQL and SVC_TEST_REDIS_URL)'
    : ((reason) => (reason ? ` (skipped: ${reason})` : ''))(namespacesUnavailable());

/** docs/operations.md, "Several machines": the most the nodes' clocks may differ. */
const CLOCK_BOUND_MS = 100;

const SEND = `mutation($c: ID!, $t: String!) {
  sendMessage(input: { conversationId: $c, text: $t }) { id createdAt }
}`;
const READ = `query($c: ID!) {
  messages(conversationId: $c, limit: 100) { items { text createdAt } }
}`;

/** `url` with its host and port replaced by `to`'s. */
function via(url: string, to: { host: string; port: number }): string {
  const u = new URL(url);
  u.hostname = to.host;
  u.port = String(to.port);
  return u.toString();
}

describe.skipIf(SKIP !== '')(`svc on two hosts${SKIP}`, () => {
  let database: TestDatabase;
  let setup: AppContext;
  let hosts: { hosts: Host[]; remove(): void } | null = null;
  const forwarders: net.Server[] = [];
  let a: HostNode;
  let b: HostNode;
  let sam: Session;
  let pia: Session;
  let workspace = '';
  let channel = '';

  beforeAll(async () => {
    database = await createTestDatabase();
    const shared = {
      SVC_REDIS_PREFIX: redisTestPrefix(),
      // The data directory on storage both hosts mount.
      SVC_DATA_DIR: database.dataDir,
    };
    setup = await createMigratedContext(
      database,
      { ...database.env, ...shared, SVC_REDIS_URL: REDIS_URL!, SVC_LOG_LEVEL: 'warn' },
      { passive: true },
    );
    for (const username of ['sam', 'pia']) {
      await setup.services.accounts.createPasswordAccount({
        username,
        password: PASSWORD,
        email: null,
      });
    }
    hosts = makeHosts(2);
    const pg = new URL(database.env.SVC_DATABASE_URL!);
    const redis = new URL(REDIS_URL!);
    const nodes = [];
    for (const host of hosts.hosts) {
      // PostgreSQL and Redis as another host reaches them: at an address of the network.
      const pgAt = { host: host.gateway, port: 5432 };
      const redisAt = { host: host.gateway, port: 6379 };
      forwarders.push(
        await forward(pgAt, { host: pg.hostname, port: Number(pg.port || 5432) }),
        await forward(redisAt, { host: redis.hostname, port: Number(redis.port || 6379) }),
      );
      nodes.push(
        new HostNode(
          host,
          {
            ...shared,
            SVC_DATABASE_URL: via(database.env.SVC_DATABASE_URL!, pgAt),
            SVC_REDIS_URL: via(REDIS_URL!, redisAt),
          },
          database.dataDir,
        ),
      );
    }
    [a, b] = nodes as [HostNode, HostNode];
    await Promise.all([a.ready(), b.ready()]);
    sam = await login(a, 'sam');
    pia = await login(b, 'pia');
    const made = await gql(
      a,
      sam,
      'mutation { createWorkspace(input: { name: "Hosts" }) { id channels { id name } } }',
    );
    workspace = made.data.createWorkspace.id;
    channel = made.data.createWorkspace.channels.find(
      (c: { name: string }) => c.name === 'general',
    ).id;
    const invite = await gql(
      a,
      sam,
      'mutation($s: ID!) { createWorkspaceInvite(input: { serverId: $s }) { token } }',
      { s: workspace },
    );
    const joined = await gql(b, pia, 'mutation($t: String!) { joinWorkspace(token: $t) { id } }', {
      t: invite.data.createWorkspaceInvite.token,
    });
    expect(joined.errors).toBeUndefined();
  }, 180_000);

  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    for (const f of forwarders) f.close();
    hosts?.remove();
    await setup?.close();
    await database?.drop();
  }, 60_000);

  it('serves one instance from both hosts: a session from either, files from the shared directory', async () => {
    // Sam signed in on host A; host B knows the session.
    const me = await gql(b, sam, '{ me { username } }');
    expect(me.data?.me?.username).toBe('sam');

    const created = await gql(
      a,
      sam,
      `mutation($c: ID!) { createAttachment(input: { conversationId: $c,
        fileName: "notes.txt", contentType: "text/plain" }) { attachmentId uploadToken } }`,
      { c: channel },
    );
    const { attachmentId, uploadToken } = created.data.createAttachment;
    const content = `stored on A, read on B ${Math.random()}`;
    const form = new FormData();
    form.set('upload_token', uploadToken);
    form.set('attachment_id', attachmentId);
    form.set('file', new Blob([content], { type: 'text/plain' }), 'notes.txt');
    const uploaded = await fetch(`${a.base}/api/files/upload`, {
      method: 'POST',
      headers: { cookie: sam.cookie, 'x-csrf-token': sam.csrf },
      body: form,
    });
    expect(uploaded.status).toBe(200);
    const download = await fetch(`${b.base}/api/attachments/${attachmentId}/download`, {
      headers: { cookie: sam.cookie },
    });
    expect(download.status).toBe(200);
    expect(await download.text()).toBe(content);
  });

  /** Watches the workspace on `node` as `who`: the texts of new messages, as they arrive. */
  function watch(node: HostNode, who: Session): { texts: string[]; client: Client } {
    const texts: string[] = [];
    class CookieSocket extends WebSocket {
      constructor(address: string, protocols?: string | string[]) {
        super(address, protocols, { headers: { cookie: who.cookie } });
      }
    }
    const client = createClient({
      url: `${node.base.replace('http', 'ws')}/api/ws`,
      webSocketImpl: CookieSocket,
      lazy: false,
      retryAttempts: 0,
      onNonLazyError: () => {},
    });
    client.subscribe(
      { query: WORKSPACE_EVENTS, variables: { id: workspace } },
      {
        next: (v) => {
          const e = (v.data as { workspaceEvents?: any } | undefined)?.workspaceEvents;
          if (e?.type === 'MessageCreated') texts.push(e.payload.message.text);
        },
        error: () => {},
        complete: () => {},
      },
    );
    return { texts, client };
  }

  /**
   * Sam sends `count` messages alternately through A and B, each after the last was
   * acknowledged and `gapMs` more. Answers the texts in the order sent, with what both
   * watchers received live and what the channel stores, oldest first.
   */
  async function sendAlternately(prefix: string, count: number, gapMs: number) {
    const watchers = [watch(a, pia), watch(b, pia)];
    try {
      await until(
        async () =>
          (await a.gauge('svc_ws_subscriptions')) + (await b.gauge('svc_ws_subscriptions')) === 2,
        'both subscriptions running',
        20_000,
      );
      const sent: string[] = [];
      for (let i = 0; i < count; i += 1) {
        const text = `${prefix} ${i}`;
        const res = await gql(i % 2 === 0 ? a : b, sam, SEND, { c: channel, t: text });
        expect(res.errors).toBeUndefined();
        sent.push(text);
        await sleep(gapMs);
      }
      for (const w of watchers) {
        await until(
          () => sent.every((t) => w.texts.includes(t)),
          'every message live on both hosts',
          10_000,
        ).catch(() => {});
      }
      const read = await gql(b, pia, READ, { c: channel });
      const stored = (read.data.messages.items as Array<{ text: string }>)
        .map((m) => m.text)
        .filter((t) => t.startsWith(`${prefix} `));
      return { sent, live: watchers.map((w) => w.texts), stored };
    } finally {
      await Promise.all(watchers.map((w) => w.client.dispose()));
    }
  }

  /** Pairs of messages stored in the other order than they were sent. */
  function inversions(sent: string[], stored: string[]): number {
    const at = new Map(stored.map((t, i) => [t, i]));
    let n = 0;
    for (let i = 0; i < sent.length; i += 1) {
      for (let j = i + 1; j < sent.length; j += 1) {
        if (at.get(sent[i]!)! > at.get(sent[j]!)!) n += 1;
      }
    }
    return n;
  }

  it(`loses and misorders nothing with A's clock ${CLOCK_BOUND_MS} ms ahead (the bound)`, async () => {
    a.setClockOffset(CLOCK_BOUND_MS);
    await sleep(100);
    // A's messages carry A's time: the offset is in force.
    const before = Date.now();
    const probe = await gql(a, sam, SEND, { c: channel, t: 'probe on A' });
    expect(Date.parse(probe.data.sendMessage.createdAt) - before).toBeGreaterThanOrEqual(
      CLOCK_BOUND_MS,
    );

    // Sent further apart than the clocks are: each is stored after the one before it.
    const { sent, live, stored } = await sendAlternately('bound', 12, CLOCK_BOUND_MS + 50);
    for (const texts of live) {
      expect(texts.filter((t) => t.startsWith('bound ')).sort()).toEqual([...sent].sort());
    }
    expect(stored).toEqual(sent);
  });

  it("past the bound, A's clock 2 s ahead: messages closer together are stored out of order, none lost", async () => {
    const skew = 2_000;
    a.setClockOffset(skew);
    await sleep(100);
    // Sent 100 ms apart, alternately: B's next message is stored before A's last ones.
    const { sent, live, stored } = await sendAlternately('past', 12, 100);
    for (const texts of live) {
      expect(texts.filter((t) => t.startsWith('past ')).sort()).toEqual([...sent].sort());
    }
    expect([...stored].sort()).toEqual([...sent].sort());
    const swapped = inversions(sent, stored);
    // docs/operations.md gives what one run measured (21 of the 66 pairs).
    expect(swapped, `${swapped} pairs out of order`).toBeGreaterThan(0);
    a.setClockOffset(0);
  });
});
