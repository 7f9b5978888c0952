import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

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
import {
  freePort,
  gql,
  login,
  PASSWORD,
  ServerProcess,
  type Session,
} from '../_util/server-process.js';
import { until, WORKSPACE_EVENTS } from '../realtime/_helpers.js';
import { findBinary } from './_binaries.js';
import {
  httpsRequest,
  makeCertificate,
  startCaddy,
  startNginx,
  type RunningProxy,
} from './_proxies.js';

// docs/operations.md, "Behind a reverse proxy": deploy/nginx/svc.conf, then deploy/Caddyfile
// (its lines for several processes taken), with two svc processes as upstreams, on one
// PostgreSQL and one Redis. A person watches a channel over the proxied WebSocket while another
// sends through the proxy; the process holding the watcher's WebSocket is killed (SIGKILL). The
// watcher's client reconnects through the proxy, which sends it to the other process, and reads
// the channel again once its subscription runs there (as the web client reads again after a
// reconnect): every message the sender had acknowledged was received live or is in that read,
// and the next message arrives live. Before the second proxy the killed process is replaced by a
// new one. Needs PostgreSQL, Redis and openssl, and each proxy; skipped otherwise, with the
// reason in the test's name.

const REDIS_URL = process.env.SVC_TEST_REDIS_URL;
const OPENSSL = findBinary('openssl');
const PROXIES = [
  { name: 'nginx', binary: findBinary('nginx'), start: startNginx },
  { name: 'Caddy', binary: findBinary('caddy'), start: startCaddy },
];
const SKIP =
  TEST_DB !== 'postgres' || !REDIS_URL
    ? ' (skipped: needs PostgreSQL and SVC_TEST_REDIS_URL)'
    : !OPENSSL
      ? ' (skipped: openssl is not installed)'
      : PROXIES.every((p) => !p.binary)
        ? ' (skipped: neither nginx nor Caddy is installed; .ci/packages installs them)'
        : '';
/** Why one proxy's test is skipped, or ''. */
const skipped = (p: (typeof PROXIES)[number]) =>
  p.binary ? '' : ` (skipped: ${p.name} is not installed; .ci/packages installs it)`;

const SEND = `mutation($c: ID!, $t: String!) {
  sendMessage(input: { conversationId: $c, text: $t }) { id }
}`;
const READ = `query($c: ID!) { messages(conversationId: $c, limit: 100) { items { text } } }`;

describe.skipIf(SKIP !== '')(`two svc processes behind a proxy, one killed${SKIP}`, () => {
  let database: TestDatabase;
  let setup: AppContext;
  let env: Record<string, string>;
  let nodes: ServerProcess[] = [];
  let dir: string;
  let cert: ReturnType<typeof makeCertificate>;
  const sessions: Record<string, Session> = {};
  let channel = '';
  let serverId = '';

  const startNode = async () => {
    const node = new ServerProcess(await freePort(), await freePort(), env);
    await node.ready();
    return node;
  };

  beforeAll(async () => {
    database = await createTestDatabase();
    env = {
      ...database.env,
      SVC_REDIS_URL: REDIS_URL!,
      SVC_REDIS_PREFIX: redisTestPrefix(),
      SVC_TRUST_FORWARDED_HEADERS: 'true',
    };
    // The schema and the server keys made here, so both processes can start together.
    setup = await createMigratedContext(
      database,
      { ...env, SVC_LOG_LEVEL: 'warn' },
      { passive: true },
    );
    for (const username of ['sam', 'pia']) {
      await setup.services.accounts.createPasswordAccount({
        username,
        password: PASSWORD,
        email: null,
      });
    }
    nodes = await Promise.all([startNode(), startNode()]);
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-failover-'));
    cert = makeCertificate(dir);
    // Sessions and the channel are the database's: made once, straight at a process.
    for (const username of ['sam', 'pia']) sessions[username] = await login(nodes[0]!, username);
    const made = await gql(
      nodes[0]!,
      sessions.sam!,
      'mutation { createWorkspace(input: { name: "Failover" }) { id channels { id name } } }',
    );
    serverId = made.data.createWorkspace.id;
    channel = made.data.createWorkspace.channels.find(
      (c: { name: string }) => c.name === 'general',
    ).id;
    const invite = await gql(
      nodes[0]!,
      sessions.sam!,
      'mutation($s: ID!) { createWorkspaceInvite(input: { serverId: $s }) { token } }',
      { s: serverId },
    );
    const joined = await gql(
      nodes[0]!,
      sessions.pia!,
      'mutation($t: String!) { joinWorkspace(token: $t) { id } }',
      { t: invite.data.createWorkspaceInvite.token },
    );
    expect(joined.errors).toBeUndefined();
  }, 180_000);

  afterAll(async () => {
    await Promise.all(nodes.map((n) => n.stop()));
    await setup?.close();
    await database?.drop();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  for (const p of PROXIES) {
    it.skipIf(skipped(p) !== '')(
      `${p.name}: reconnects the watcher to the other process; nothing acknowledged is missed${skipped(p)}`,
      async () => {
        // A process killed by an earlier proxy's run is replaced.
        nodes = await Promise.all(
          nodes.map((n) =>
            n.child.exitCode === null && n.child.signalCode === null ? n : startNode(),
          ),
        );
        const proxyDir = fs.mkdtempSync(path.join(dir, `${p.name}-`));
        const proxy = await p.start(
          p.binary!,
          proxyDir,
          cert,
          nodes.map((n) => `127.0.0.1:${n.port}`),
        );
        try {
          await failover(proxy, p.name);
        } finally {
          await proxy.stop();
        }
      },
      120_000,
    );
  }

  async function failover(proxy: RunningProxy, prefix: string): Promise<void> {
    const origin = `https://127.0.0.1:${proxy.port}`;
    const through = async (who: string, query: string, variables: Record<string, unknown>) => {
      const s = sessions[who]!;
      const answer = await httpsRequest(proxy.port, cert.ca, 'POST', '/api', {
        headers: {
          'content-type': 'application/json',
          origin,
          cookie: s.cookie,
          'x-csrf-token': s.csrf,
        },
        body: JSON.stringify({ query, variables }),
      });
      return {
        status: answer.status,
        json: answer.status === 200 ? JSON.parse(answer.body) : null,
      };
    };
    const pia = sessions.pia!;
    const live = new Set<string>();
    let connections = 0;
    class ProxiedSocket extends WebSocket {
      constructor(address: string, protocols?: string | string[]) {
        super(address, protocols, { headers: { cookie: pia.cookie, origin }, ca: cert.ca });
      }
    }
    const client: Client = createClient({
      url: `wss://127.0.0.1:${proxy.port}/api/ws`,
      webSocketImpl: ProxiedSocket,
      lazy: false,
      retryAttempts: 20,
      shouldRetry: () => true,
      retryWait: async () => {
        await sleep(200);
      },
      onNonLazyError: () => {},
      on: { connected: () => (connections += 1) },
    });
    client.subscribe(
      { query: WORKSPACE_EVENTS, variables: { id: serverId } },
      {
        next: (v) => {
          const e = (v.data as { workspaceEvents?: any } | undefined)?.workspaceEvents;
          if (e?.type === 'MessageCreated') live.add(e.payload.message.text);
        },
        error: () => {},
        complete: () => {},
      },
    );
    const subscriptions = (n: ServerProcess) => n.gauge('svc_ws_subscriptions').catch(() => 0);
    try {
      await until(
        async () => (await subscriptions(nodes[0]!)) + (await subscriptions(nodes[1]!)) === 1,
        'the subscription running',
        20_000,
      );
      const holder = (await subscriptions(nodes[0]!)) === 1 ? nodes[0]! : nodes[1]!;
      const other = holder === nodes[0] ? nodes[1]! : nodes[0]!;

      // Sam sends through the proxy, one message after the other, until told to stop.
      const acked: string[] = [];
      let stop = false;
      const sending = (async () => {
        for (let i = 0; !stop; i += 1) {
          const t = `${prefix} m#${i}`;
          const res = await through('sam', SEND, { c: channel, t }).catch(() => null);
          // A request the killed process never answered (502 from the proxy) was not acknowledged.
          if (res?.status === 200 && !res.json.errors) acked.push(t);
          await sleep(20);
        }
      })();
      await until(() => live.size >= 3, 'messages live before the kill', 10_000);
      await holder.kill();
      await until(() => connections >= 2, 'the client connected again', 20_000);
      await until(
        async () => (await subscriptions(other)) === 1,
        'its subscription on the other process',
        20_000,
      );
      // The client reads the channel again now that its subscription runs.
      const readAt = acked.length;
      // A read the proxy handed to the dead node before its health check caught up answers 502
      // (Caddy retries a request with a body only when it could not connect): the client
      // reads again, as it would.
      let read = await through('pia', READ, { c: channel });
      for (let i = 0; i < 50 && read.status !== 200; i += 1) {
        await sleep(200);
        read = await through('pia', READ, { c: channel });
      }
      expect(read.status).toBe(200);
      const stored = new Set<string>(
        read.json.data.messages.items.map((m: { text: string }) => m.text),
      );
      // Sends go on until one made after the read comes live through the other process (a
      // proxy may spend its first tries after the kill on the dead node).
      await until(
        () => acked.slice(readAt).some((t) => live.has(t)),
        'a message sent after the read, live',
        15_000,
      ).catch(() => {});
      stop = true;
      await sending;

      const missing = () => acked.filter((t) => !live.has(t) && !stored.has(t));
      await until(() => missing().length === 0, 'every acknowledged message', 10_000).catch(
        () => {},
      );
      expect(missing()).toEqual([]);
      // Messages sent after the read came live, through the other process.
      expect(acked.slice(readAt).filter((t) => live.has(t)).length).toBeGreaterThan(0);
    } finally {
      await client.dispose();
    }
  }
});
