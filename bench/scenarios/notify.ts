import path from 'node:path';

import Sqlite from 'better-sqlite3';
import pg from 'pg';

import { gql, signup, type Session } from '../lib/client.js';
import { percentile, sleep } from '../lib/proc.js';
import type { ScenarioResult } from '../lib/report.js';
import { SEND } from '../lib/setup.js';
import { createBackend, startSvc, type Backend } from '../lib/svc.js';

import type { Options } from './fanout.js';

// Notification fan-out (docs/notifications.md, "Fan-out"): the send p99 of messages to a channel
// of 10,000 members without a mention, and with `@channel` (10,000 notifications each, written
// after the commit in batches of 500), and of plain sends while that work is still draining.
// The members are written straight into the database (10,000 signups through the API would
// spend minutes hashing passwords); every message goes through the API.

const MEMBERS = 10_000;
const PLAIN = 300;
const CHANNEL = 20;

function uuid7(n: number): string {
  // Time-ordered like the server's ids, unique per member.
  const hex = (Date.now() * 1000 + n).toString(16).padStart(16, '0').slice(-16);
  const tail = n.toString(16).padStart(12, '0').slice(-12);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-7${hex.slice(13, 16)}-8000-${tail}`;
}

interface Member {
  id: string;
  username: string;
}

async function loadMembers(backend: Backend, serverId: string, channelId: string) {
  const now = Date.now();
  const members: Member[] = Array.from({ length: MEMBERS }, (_, i) => ({
    id: uuid7(i),
    username: `nm${i}`,
  }));
  const accountCols = `(id, username, "usernameKey", "isOperator", "createdAt")`;
  if (backend.kind === 'sqlite') {
    const db = new Sqlite(path.join(backend.dataDir, 'svc.sqlite'));
    db.pragma('busy_timeout = 10000');
    const account = db.prepare(`insert into account ${accountCols} values (?, ?, ?, 0, ?)`);
    const wm = db.prepare(
      `insert into workspace_member ("workspaceId", "accountId", role, "joinedAt") values (?, ?, 'member', ?)`,
    );
    const cm = db.prepare(
      `insert into conversation_member ("conversationId", "accountId", state, "joinedAt") values (?, ?, 'member', ?)`,
    );
    db.transaction(() => {
      for (const m of members) {
        account.run(m.id, m.username, m.username, now);
        wm.run(serverId, m.id, now);
        cm.run(channelId, m.id, now);
      }
    })();
    db.close();
    return;
  }
  const client = new pg.Client({ connectionString: backend.env.SVC_DATABASE_URL });
  await client.connect();
  const ids = members.map((m) => m.id);
  const names = members.map((m) => m.username);
  await client.query(
    `insert into account ${accountCols} select id, u, u, 0, $3 from unnest($1::text[], $2::text[]) as t(id, u)`,
    [ids, names, now],
  );
  await client.query(
    `insert into workspace_member ("workspaceId", "accountId", role, "joinedAt") select $1, id, 'member', $3 from unnest($2::text[]) as t(id)`,
    [serverId, ids, now],
  );
  await client.query(
    `insert into conversation_member ("conversationId", "accountId", state, "joinedAt") select $1, id, 'member', $3 from unnest($2::text[]) as t(id)`,
    [channelId, ids, now],
  );
  await client.end();
}

async function notificationCount(backend: Backend): Promise<number> {
  if (backend.kind === 'sqlite') {
    const db = new Sqlite(path.join(backend.dataDir, 'svc.sqlite'), { readonly: true });
    const row = db.prepare('select count(*) as n from notification').get() as { n: number };
    db.close();
    return row.n;
  }
  const client = new pg.Client({ connectionString: backend.env.SVC_DATABASE_URL });
  await client.connect();
  const { rows } = await client.query<{ n: string }>('select count(*) as n from notification');
  await client.end();
  return Number(rows[0]?.n ?? 0);
}

async function sends(base: string, s: Session, conv: string, text: string, n: number) {
  const latencies: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    await gql(base, SEND, { i: { conversationId: conv, text: `${text} ${i}` } }, s);
    latencies.push(performance.now() - t);
  }
  return { p50: percentile(latencies, 50), p99: percentile(latencies, 99) };
}

export async function notify(opts: Options): Promise<ScenarioResult> {
  const rows: ScenarioResult['rows'] = [];
  const backend = await createBackend(opts.pg);
  const svc = await startSvc(backend);
  let plain = { p50: 0, p99: 0 };
  let channel = { p50: 0, p99: 0 };
  try {
    const owner = await signup(svc.url, `nown${Date.now().toString(36)}`);
    const ws = await gql(
      svc.url,
      'mutation($i: CreateWorkspaceInput!) { createWorkspace(input: $i) { id channels { id } } }',
      { i: { name: 'notify bench' } },
      owner,
    );
    const serverId = ws.data.createWorkspace.id as string;
    const channelId = ws.data.createWorkspace.channels[0].id as string;
    await loadMembers(backend, serverId, channelId);

    await sends(svc.url, owner, channelId, 'warm up', 50);
    plain = await sends(svc.url, owner, channelId, 'no mention here', PLAIN);
    rows.push({
      target: `message to ${MEMBERS.toLocaleString('en')} members, no mention`,
      sends: PLAIN,
      p50_ms: plain.p50,
      p99_ms: plain.p99,
    });

    const started = performance.now();
    channel = await sends(svc.url, owner, channelId, '@channel heads up', CHANNEL);
    rows.push({
      target: `@channel to ${MEMBERS.toLocaleString('en')} members`,
      sends: CHANNEL,
      p50_ms: channel.p50,
      p99_ms: channel.p99,
    });
    // Sends while the fan-out of those messages is still being written.
    const during = await sends(svc.url, owner, channelId, 'during the fan-out', 100);
    const pending = (await notificationCount(backend)) < CHANNEL * MEMBERS;
    rows.push({
      target: 'no mention, while the @channel fan-out drains',
      sends: 100,
      p50_ms: during.p50,
      p99_ms: during.p99,
      fan_out_still_running: pending ? 'yes' : 'no',
    });
    while ((await notificationCount(backend)) < CHANNEL * MEMBERS) await sleep(200);
    const drained = (performance.now() - started) / 1000;
    rows.push({
      target: 'fan-out written',
      notifications: CHANNEL * MEMBERS,
      seconds: Number(drained.toFixed(1)),
      notifications_per_s: Math.round((CHANNEL * MEMBERS) / drained),
    });
  } finally {
    await svc.proc.stop();
    await backend.drop();
  }
  const ratio = channel.p99 / Math.max(plain.p99, 0.001);
  return {
    scenario: 'notify',
    database: opts.pg ? 'postgres' : 'sqlite',
    rows,
    targets: [
      {
        target: '@channel send p99 within 2x of a send without mentions',
        met: ratio <= 2,
        detail: `${channel.p99.toFixed(1)} ms vs ${plain.p99.toFixed(1)} ms (${ratio.toFixed(2)}x)`,
      },
    ],
  };
}
