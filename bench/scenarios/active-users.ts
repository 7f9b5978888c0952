// `active-users`: a simulated population, after Mattermost's load-test-ng. Each user signs in
// with a device key, holds one WebSocket subscribed to their workspace's events, and acts every
// few seconds on a fixed mix of what people do in a chat (below). The harness adds users step by
// step and holds each population for a while; it stops at the first step that breaks a
// threshold and reports the largest population that held, with the server's CPU and RSS, and
// what one more held user costs in memory (RSS and V8 heap after a full collection, per user
// added by the step).
//
// Thresholds (any one breaks a step): the p99 of any request kind over 200 ms, any HTTP 5xx or
// INTERNAL error, any message delivered over 1 s after it was sent.
//
// Mix per action (each user acts on average every MEAN_THINK_MS, exponentially distributed):
//   35% read a page of a channel (messages, limit 30)
//   20% mark the channel read (markRead on its newest message)
//   20% typing (startTyping in a channel: svc shows typing in direct conversations only, so
//       these are refused with VALIDATION, and what is measured is the refusal's cost)
//   15% send a message (sendMessage, delivered to the workspace's subscribers)
//    5% list their inbox (inboxConversations)
//    5% join or leave a channel (joinChannel / leaveChannel)
//
// Shape: workspaces of WORKSPACE_SIZE users with CHANNELS channels each; a user is in `general`
// and two other channels. SQLite: one process. With --pg: two processes on PostgreSQL and
// Redis, users split between them. Knobs (environment): BENCH_USERS_START, BENCH_USERS_STEP,
// BENCH_USERS_MAX, BENCH_HOLD_S; BENCH_JOINED_ONLY=1 subscribes with `joinedChannelsOnly` (a
// public channel's events reach its members only, as Slack and Mattermost deliver them; by
// default every member gets every public channel's events). Every user is in `general` and the
// next two channels, so most messages reach the whole workspace either way.
import { gql, post, subscribe, type Session, type Subscriber } from '../lib/client.js';
import { loginWithKey, signupWithKey, type KeyAccount } from '../lib/keys.js';
import { cpuSeconds, freePort, postgresCpuSeconds, rssBytes, sleep } from '../lib/proc.js';
import { REFERENCE_SPEED_AT_TARGET, referenceSpeed } from '../lib/reference.js';
import type { ScenarioResult } from '../lib/report.js';
import { JOINED_SUBSCRIPTION, SUBSCRIPTION, prepareWorkspace } from '../lib/setup.js';
import { createBackend, startSvc, type SvcServer } from '../lib/svc.js';

import type { Options } from './fanout.js';

const env = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const START = env('BENCH_USERS_START', 500);
const STEP = env('BENCH_USERS_STEP', 500);
const MAX = env('BENCH_USERS_MAX', 8000);
const HOLD_S = env('BENCH_HOLD_S', 120);
const JOINED_ONLY = process.env.BENCH_JOINED_ONLY === '1';
const WORKSPACE_SIZE = 500;
const CHANNELS = 10;
const MEAN_THINK_MS = 6000;
const P99_LIMIT_MS = 200;
const DELIVERY_LIMIT_MS = 1000;

type Kind = 'read' | 'markRead' | 'typing' | 'send' | 'inbox' | 'joinLeave';
const MIX: Array<[Kind, number]> = [
  ['read', 0.35],
  ['markRead', 0.2],
  ['typing', 0.2],
  ['send', 0.15],
  ['inbox', 0.05],
  ['joinLeave', 0.05],
];

interface Space {
  serverId: string;
  channels: string[];
  invite: string;
  owner: Session;
}

interface User {
  account: KeyAccount;
  space: Space;
  base: string;
  session?: Session;
  sub?: Subscriber;
  channels: string[];
  newest: Map<string, string>;
  timer?: NodeJS.Timeout;
  /** Set when the run ends: an action still under way then schedules no next one. */
  stopped?: boolean;
}

/** What one held step saw. */
class Window {
  latencies = new Map<Kind, number[]>();
  failures = 0;
  lateDeliveries = 0;
  deliveries = 0;
  maxDeliveryMs = 0;
  /** Every event the subscribers received, by its type: what the fan-out delivers. */
  events = new Map<string, number>();
  record(kind: Kind, ms: number) {
    const list = this.latencies.get(kind) ?? [];
    list.push(ms);
    this.latencies.set(kind, list);
  }
  p99(kind: Kind): number {
    const list = [...(this.latencies.get(kind) ?? [])].sort((a, b) => a - b);
    return list.length
      ? (list[Math.min(list.length - 1, Math.floor(list.length * 0.99))] as number)
      : 0;
  }
  worst(): { kind: Kind; p99: number } {
    let worst = { kind: 'read' as Kind, p99: 0 };
    for (const [kind] of MIX) if (this.p99(kind) > worst.p99) worst = { kind, p99: this.p99(kind) };
    return worst;
  }
}

let window = new Window();

function pick(): Kind {
  let r = Math.random();
  for (const [kind, share] of MIX) {
    if ((r -= share) <= 0) return kind;
  }
  return 'read';
}

const randomOf = <T>(xs: readonly T[]): T => xs[Math.floor(Math.random() * xs.length)] as T;

/** One request, timed. A 5xx or an INTERNAL error is a failure; a refusal is an answer. */
async function timed(
  kind: Kind,
  base: string,
  query: string,
  variables: Record<string, unknown>,
  s: Session,
): Promise<{ data: Record<string, any> } | null> {
  const t0 = performance.now();
  try {
    const res = await post(`${base}/api`, JSON.stringify({ query, variables }), {
      cookie: s.cookie,
      'x-csrf-token': s.csrf,
    });
    window.record(kind, performance.now() - t0);
    if (res.status >= 500) {
      window.failures += 1;
      if (window.failures <= 3)
        console.error(`${kind}: HTTP ${res.status} ${res.body.slice(0, 200)}`);
      return null;
    }
    const body = JSON.parse(res.body) as { data?: Record<string, any>; errors?: unknown[] };
    if (body.errors?.length) {
      if (JSON.stringify(body.errors).includes('"INTERNAL"')) {
        window.failures += 1;
        if (window.failures <= 3) console.error(`${kind}: ${JSON.stringify(body.errors)}`);
      }
      return null;
    }
    return { data: body.data ?? {} };
  } catch (err) {
    window.record(kind, performance.now() - t0);
    window.failures += 1;
    if (window.failures <= 3) console.error(`${kind}: ${String(err)}`);
    return null;
  }
}

async function act(user: User): Promise<void> {
  const s = user.session as Session;
  const channel = randomOf(user.channels);
  switch (pick()) {
    case 'read': {
      const r = await timed(
        'read',
        user.base,
        'query($c: ID!) { messages(conversationId: $c, limit: 30) { items { id text createdAt author { id } } } }',
        { c: channel },
        s,
      );
      const first = r?.data.messages.items[0] as { id: string } | undefined;
      if (first) user.newest.set(channel, first.id);
      return;
    }
    case 'markRead': {
      const newest = user.newest.get(channel);
      if (!newest) return;
      await timed(
        'markRead',
        user.base,
        'mutation($c: ID!, $m: ID!) { markRead(conversationId: $c, messageId: $m) { id } }',
        { c: channel, m: newest },
        s,
      );
      return;
    }
    case 'typing':
      await timed(
        'typing',
        user.base,
        'mutation($c: ID!) { startTyping(conversationId: $c) }',
        { c: channel },
        s,
      );
      return;
    case 'send':
      await timed(
        'send',
        user.base,
        'mutation($i: SendMessageInput!) { sendMessage(input: $i) { id } }',
        {
          i: {
            conversationId: channel,
            text: `load t=${Date.now()} from ${user.account.username}`,
          },
        },
        s,
      );
      return;
    case 'inbox':
      await timed('inbox', user.base, '{ inboxConversations(limit: 20) { items { id } } }', {}, s);
      return;
    case 'joinLeave': {
      const other = randomOf(user.space.channels.slice(1));
      if (user.channels.includes(other)) {
        await timed(
          'joinLeave',
          user.base,
          'mutation($c: ID!) { leaveChannel(conversationId: $c) }',
          { c: other },
          s,
        );
        user.channels = user.channels.filter((c) => c !== other);
      } else {
        await timed(
          'joinLeave',
          user.base,
          'mutation($c: ID!) { joinChannel(conversationId: $c) { id } }',
          { c: other },
          s,
        );
        user.channels.push(other);
      }
    }
  }
}

function schedule(user: User): void {
  if (user.stopped) return;
  const think = -Math.log(1 - Math.random()) * MEAN_THINK_MS;
  user.timer = setTimeout(() => {
    void act(user).finally(() => schedule(user));
  }, think);
}

async function createSpace(base: string): Promise<Space> {
  const ws = await prepareWorkspace(base, 1);
  const channels = [ws.channelId];
  for (let i = 1; i < CHANNELS; i++) {
    const c = await gql(
      base,
      'mutation($i: CreateChannelInput!) { createChannel(input: $i) { id } }',
      { i: { serverId: ws.serverId, name: `load-${i}` } },
      ws.owner,
    );
    channels.push(c.data.createChannel.id as string);
  }
  const inv = await gql(
    base,
    'mutation($i: CreateWorkspaceInviteInput!) { createWorkspaceInvite(input: $i) { token } }',
    { i: { serverId: ws.serverId, maxUses: WORKSPACE_SIZE + 10 } },
    ws.owner,
  );
  return {
    serverId: ws.serverId,
    channels,
    invite: inv.data.createWorkspaceInvite.token,
    owner: ws.owner,
  };
}

/** Signs the user up (once) and in, subscribes, joins two channels, and starts acting. */
async function start(user: User): Promise<void> {
  user.session = await loginWithKey(user.base, user.account);
  user.sub = await subscribe(
    user.base,
    user.session,
    JOINED_ONLY ? JOINED_SUBSCRIPTION : SUBSCRIPTION,
    { s: user.space.serverId },
    (raw, at) => {
      const type = /"workspaceEvents":\{"type":"(\w+)"/.exec(raw)?.[1] ?? 'other';
      window.events.set(type, (window.events.get(type) ?? 0) + 1);
      const m = /load t=(\d+)/.exec(raw);
      if (!m) return;
      const ms = Date.now() - Number(m[1]);
      void at;
      window.deliveries += 1;
      window.maxDeliveryMs = Math.max(window.maxDeliveryMs, ms);
      if (ms > DELIVERY_LIMIT_MS) window.lateDeliveries += 1;
    },
  );
  for (const c of user.space.channels.slice(1, 3)) {
    await gql(
      user.base,
      'mutation($c: ID!) { joinChannel(conversationId: $c) { id } }',
      { c },
      user.session,
    );
  }
  schedule(user);
}

/** A server with its metrics listener, for the heap it reports. */
interface Held extends SvcServer {
  metrics: string;
}

async function startHeld(backend: Awaited<ReturnType<typeof createBackend>>): Promise<Held> {
  const port = await freePort();
  const server = await startSvc(backend, { SVC_METRICS_ADDR: `127.0.0.1:${port}` }, [
    '--require',
    new URL('../lib/gc-on-signal.cjs', import.meta.url).pathname,
  ]);
  return { ...server, metrics: `http://127.0.0.1:${port}/metrics` };
}

/**
 * The servers' memory after a full collection (SIGUSR2, bench/lib/gc-on-signal.cjs): RSS, and
 * the V8 heap in use as the metrics listener reports it. Measured before the first step and at
 * the end of each hold, so (this step - the step before) / users added is what one more held
 * user costs: their session, socket, subscription and the server's per-user state, with the
 * load of acting still on. The first step's figure also holds what any load warms up once (the
 * compiled documents, the kept pages and accounts), so the later steps' are the ones to read.
 */
async function settledMemory(servers: Held[]): Promise<{ rss: number; heap: number }> {
  for (let i = 0; i < 2; i++) {
    for (const s of servers) process.kill(s.proc.pid, 'SIGUSR2');
    await sleep(500);
  }
  let heap = 0;
  for (const s of servers) {
    const text = await (await fetch(s.metrics)).text();
    heap += Number(/^svc_nodejs_heap_size_used_bytes (\S+)$/m.exec(text)?.[1] ?? NaN);
  }
  return { rss: servers.reduce((n, s) => n + rssBytes(s.proc.pid), 0), heap };
}

export async function activeUsers(opts: Options): Promise<ScenarioResult> {
  // The machine's speed, measured before the population starts (issue 46 scales the target by it).
  const refSpeed = await referenceSpeed();
  const scaledTarget = (5000 * refSpeed) / REFERENCE_SPEED_AT_TARGET;
  const backend = await createBackend(opts.pg);
  const servers: Held[] = [await startHeld(backend)];
  if (opts.pg) servers.push(await startHeld(backend));
  const rows: ScenarioResult['rows'] = [];
  const users: User[] = [];
  const spaces: Space[] = [];
  let held = 0;
  let broke = '';
  let before: { rss: number; heap: number } | null = null;
  try {
    for (let population = START; population <= MAX; population += STEP) {
      // New users: key accounts made through the API, 20 at a time.
      const fresh: User[] = [];
      while (users.length + fresh.length < population) {
        const index = users.length + fresh.length;
        const spaceIndex = Math.floor(index / WORKSPACE_SIZE);
        const base = (servers[index % servers.length] as SvcServer).url;
        if (!spaces[spaceIndex]) spaces[spaceIndex] = await createSpace(servers[0]!.url);
        fresh.push({
          account: { username: '', device: undefined as never },
          space: spaces[spaceIndex] as Space,
          base,
          channels: [],
          newest: new Map(),
        });
      }
      // The servers' memory before any user, once the first workspaces exist.
      before ??= await settledMemory(servers);
      for (let i = 0; i < fresh.length; i += 20) {
        await Promise.all(
          fresh.slice(i, i + 20).map(async (u, j) => {
            u.account = await signupWithKey(
              u.base,
              `load${users.length + i + j}x${Date.now().toString(36)}`,
              u.space.invite,
            );
            u.channels = [u.space.channels[0] as string];
          }),
        );
      }
      for (let i = 0; i < fresh.length; i += 50)
        await Promise.all(fresh.slice(i, i + 50).map(start));
      users.push(...fresh);
      // Let the sign-ins settle, then hold the population and watch.
      await sleep(3000);
      window = new Window();
      const cpu0 = servers.map((s) => cpuSeconds(s.proc.pid));
      // The clients run in this process and share the machine's cores with the servers; their
      // share says whether a step broke for the server's CPU or the machine's.
      const clients0 = cpuSeconds(process.pid);
      const pg0 = opts.pg ? postgresCpuSeconds() : 0;
      await sleep(HOLD_S * 1000);
      const cpu = servers.reduce((n, s, i) => n + cpuSeconds(s.proc.pid) - (cpu0[i] as number), 0);
      const clientsCpu = cpuSeconds(process.pid) - clients0;
      const pgCpu = opts.pg ? postgresCpuSeconds() - pg0 : 0;
      const rss = servers.reduce((n, s) => n + rssBytes(s.proc.pid), 0);
      const settled = await settledMemory(servers);
      const previous = before;
      before = settled;
      const worst = window.worst();
      const requests = [...window.latencies.values()].reduce((n, l) => n + l.length, 0);
      rows.push({
        users: population,
        requests_per_s: Math.round(requests / HOLD_S),
        worst_p99: `${worst.kind} ${worst.p99.toFixed(0)} ms`,
        send_p99_ms: window.p99('send'),
        read_p99_ms: window.p99('read'),
        failures: window.failures,
        deliveries: window.deliveries,
        late_deliveries: window.lateDeliveries,
        max_delivery_ms: window.maxDeliveryMs,
        events_per_s: [...window.events]
          .sort((a, b) => b[1] - a[1])
          .map(([type, n]) => `${type} ${Math.round(n / HOLD_S)}`)
          .join(', '),
        server_cpu_share: cpu / HOLD_S,
        clients_cpu_share: clientsCpu / HOLD_S,
        ...(opts.pg ? { postgres_cpu_share: pgCpu / HOLD_S } : {}),
        server_rss_mib: rss / 2 ** 20,
        kib_rss_per_added_user: (settled.rss - previous.rss) / fresh.length / 1024,
        kib_heap_per_added_user: (settled.heap - previous.heap) / fresh.length / 1024,
      });
      console.log(JSON.stringify(rows[rows.length - 1]));
      if (worst.p99 > P99_LIMIT_MS) broke = `p99 of ${worst.kind} ${worst.p99.toFixed(0)} ms`;
      else if (window.failures > 0) broke = `${window.failures} failed requests`;
      else if (window.lateDeliveries > 0) broke = `${window.lateDeliveries} deliveries over 1 s`;
      if (broke) break;
      held = population;
    }
  } finally {
    for (const u of users) {
      // Without the flag an action under way rescheduled its user after the clear, so the load
      // went on against a stopped server and the process never ended, loading the next run.
      u.stopped = true;
      clearTimeout(u.timer);
      u.sub?.close();
    }
    await sleep(500);
    for (const s of servers) await s.proc.stop();
    await backend.drop();
  }
  return {
    scenario: 'active-users',
    database: opts.pg ? 'postgres' : 'sqlite',
    rows,
    targets: [
      {
        target: 'the largest population that held >= 5,000 users',
        met: held >= 5000,
        detail: `${held} users held${broke ? `; the next step broke: ${broke}` : ''} (hold ${HOLD_S} s per step)`,
      },
      {
        target: `held >= 5,000 x (reference route ${Math.round(refSpeed)} req/s / ${REFERENCE_SPEED_AT_TARGET})`,
        met: held >= scaledTarget,
        detail: `${held} users held against ${Math.round(scaledTarget)}`,
      },
    ],
    notes: [
      `reference JSON route: ${Math.round(refSpeed)} req/s in this run`,
      `${opts.pg ? 'two processes on PostgreSQL and Redis' : 'one process on SQLite'}; steps of ${STEP} from ${START}; workspaces of ${WORKSPACE_SIZE} users, ${CHANNELS} channels; one action per user every ${MEAN_THINK_MS / 1000} s on average; ${JOINED_ONLY ? 'subscribed to joined channels only' : 'subscribed to every public channel'}`,
    ],
  };
}
