// `instructions`: what one request costs the server in instructions (valgrind's callgrind), for
// the requests of `active-users`' mix and a key sign-in, one client at a time, beside the bare
// Fastify routes. Counts repeat from run to run on the same build, so a change's effect is seen
// in one run however noisy the machine (bench/lib/callgrind.ts; the kernel's work is not in them).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { byCategory, callgrindLaunch, category, measure, type Profile } from '../lib/callgrind.js';
import { connectionCycle, gql, post, signup, type Session } from '../lib/client.js';
import { loginWithKey, signupWithKey } from '../lib/keys.js';
import { startReference } from '../lib/reference.js';
import type { ScenarioResult } from '../lib/report.js';
import { SEND, SUBSCRIPTION } from '../lib/setup.js';
import { createBackend, startSvc } from '../lib/svc.js';

import type { Options } from './fanout.js';
import { refEnv } from './send.js';

/** Requests per measurement. */
const COUNT = Number(process.env.BENCH_INSTRUCTIONS_COUNT ?? 200);
/**
 * Requests before it, uncounted, so that V8 has compiled the hot code as a long-running server
 * has. V8 optimizes by how often code runs, so valgrind's slowness does not change when; run
 * natively with `--trace-opt`, the server optimized 174 functions in `me`'s first 2,000
 * requests, 17 in its third 2,000, up to six per 2,000 until 16,000 and none after 18,000;
 * the few compiled inside the window are counted apart (`without_gc_and_compilers`).
 */
const WARMUP = Number(process.env.BENCH_INSTRUCTIONS_WARMUP ?? 8000);
const TOP = Number(process.env.BENCH_INSTRUCTIONS_TOP ?? 12);
const REPEAT = Number(process.env.BENCH_INSTRUCTIONS_REPEAT ?? 1);
/** Comma-separated names of the cases to run (all by default). */
const ONLY = process.env.BENCH_INSTRUCTIONS_ONLY?.split(',');

/** Whose functions are listed with what they call. */
const INCLUSIVE = new Set(['svc', 'kysely', 'pg', 'pg-pool', 'pg-protocol', 'better-sqlite3']);

/** A function's name without its arguments' types and the checkout's path. */
function short(fn: string): string {
  return fn
    .replace(/\(anonymous namespace\)/g, '{anonymous}')
    .replace(/\(.*\)( const)?( \[clone [^\]]*\])?$/, '')
    .replace(/^(?:void |bool |int )/, '')
    .replace(/file:\/\/|[^ ]*\/(?=node_modules\/|dist[^/]*\/)/g, '');
}

interface Case {
  name: string;
  count: number;
  once: () => Promise<void>;
}

export async function instructions(opts: Options): Promise<ScenarioResult> {
  const rows: ScenarioResult['rows'] = [];
  const notes: string[] = [];
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-callgrind-'));
  const launched = callgrindLaunch(dir);
  const { launch, nodeArgs } = launched;

  const record = (name: string, count: number, profile: Profile) => {
    const perRequest = profile.total / count;
    const categories = [...byCategory(profile)].sort((a, b) => b[1] - a[1]);
    // Collections and compilations land in one window or the next; the rest repeats closely.
    const background = categories
      .filter(([c]) => c === 'V8 garbage collection' || c === 'V8 compilers')
      .reduce((sum, [, n]) => sum + n, 0);
    rows.push({
      request: name,
      requests: count,
      instructions_per_request: Math.round(perRequest),
      without_gc_and_compilers: Math.round((profile.total - background) / count),
      ...Object.fromEntries(
        categories
          .slice(0, 6)
          .map(([c, n], i) => [`part_${i + 1}`, `${c} ${((n / profile.total) * 100).toFixed(0)}%`]),
      ),
    });
    const top = [...profile.byFunction]
      .sort((a, b) => b[1] - a[1])
      .slice(0, TOP)
      .map(([fn, n]) => {
        // A builtin or runtime function is named with the callers that made it run.
        const by = fn.startsWith('JS:')
          ? []
          : [...(profile.callers.get(fn) ?? [])].sort((a, b) => b[1] - a[1]).slice(0, 3);
        const from = by.map(([caller, c]) => `${Math.round(c / count)} from ${short(caller)}`);
        return `${Math.round(n / count)} ${short(fn)}${from.length ? `\n      ${from.join('\n      ')}` : ''}`;
      });
    notes.push(`${name}, self instructions per request:\n  ${top.join('\n  ')}`);
    // What svc's functions and the database drivers' cost with what they call: the sum of the
    // calls into each. An async function resumed after an `await` is called by the builtin that
    // resumes it, so each of its slices is counted; a function that calls itself is counted twice.
    const inclusive = [...profile.callers]
      .filter(([fn]) => INCLUSIVE.has(category(fn)))
      .map(([fn, by]) => [fn, [...by.values()].reduce((a, b) => a + b, 0)] as const)
      .sort((a, b) => b[1] - a[1])
      .slice(0, TOP)
      .map(([fn, n]) => `${Math.round(n / count)} ${short(fn)}`);
    notes.push(`${name}, functions with their calls, per request:\n  ${inclusive.join('\n  ')}`);
  };
  const measureCase = async (pid: number, c: Case) => {
    const warmup = Math.round((WARMUP * c.count) / COUNT);
    for (let i = 0; i < warmup; i += 1) await c.once();
    for (let r = 0; r < REPEAT; r += 1) {
      const profile = await measure(pid, dir, c.name, async () => {
        for (let i = 0; i < c.count; i += 1) await c.once();
      });
      record(c.name, c.count, profile);
    }
  };

  const backend = await createBackend(opts.pg);
  // Under valgrind the server runs tens of times slower: its time limits must not be what fails.
  const patient = {
    SVC_DATABASE_CONNECT_TIMEOUT_MS: '60000',
    SVC_DATABASE_STATEMENT_TIMEOUT_MS: '60000',
    SVC_REDIS_TIMEOUT_MS: '60000',
  };
  const svc = await startSvc(backend, patient, nodeArgs, launch);
  try {
    const stamp = Date.now().toString(36);
    const alice: Session = await signup(svc.url, `ia${stamp}`);
    const ws = await gql(
      svc.url,
      'mutation($i: CreateWorkspaceInput!) { createWorkspace(input: $i) { id channels { id } } }',
      { i: { name: 'instructions' } },
      alice,
    );
    const channel = ws.data.createWorkspace.channels[0].id as string;
    const workspace = ws.data.createWorkspace.id as string;
    const key = await signupWithKey(svc.url, `ik${stamp}`, null);
    // A full page to read, whichever cases run.
    let last = '';
    for (let i = 0; i < 40; i += 1) {
      const r = await gql(svc.url, SEND, { i: { conversationId: channel, text: `${i}` } }, alice);
      last = r.data.sendMessage.id as string;
    }
    const cases: Case[] = [
      {
        name: 'me',
        count: COUNT,
        once: async () =>
          void (await gql(svc.url, '{ me { id username displayName } }', {}, alice)),
      },
      {
        name: 'sendMessage',
        count: COUNT,
        once: async () => {
          const r = await gql(
            svc.url,
            SEND,
            { i: { conversationId: channel, text: 'hello from the instructions benchmark' } },
            alice,
          );
          last = r.data.sendMessage.id as string;
        },
      },
      {
        name: 'messages (30)',
        count: COUNT,
        once: async () =>
          void (await gql(
            svc.url,
            'query($c: ID!) { messages(conversationId: $c, limit: 30) { items { id text createdAt author { id } } } }',
            { c: channel },
            alice,
          )),
      },
      {
        name: 'markRead',
        count: COUNT,
        once: async () =>
          void (await gql(
            svc.url,
            'mutation($c: ID!, $m: ID!) { markRead(conversationId: $c, messageId: $m) { id } }',
            { c: channel, m: last },
            alice,
          )),
      },
      {
        // The mix's typing in a channel: refused (typing shows in direct conversations only).
        name: 'startTyping (refused)',
        count: COUNT,
        once: async () => {
          const res = await post(
            `${svc.url}/api`,
            JSON.stringify({
              query: 'mutation($c: ID!) { startTyping(conversationId: $c) }',
              variables: { c: channel },
            }),
            { cookie: alice.cookie, 'x-csrf-token': alice.csrf },
          );
          if (!res.body.includes('"VALIDATION"')) throw new Error(`typing: ${res.body}`);
        },
      },
      {
        name: 'key sign-in (challenge and login)',
        count: Math.max(1, Math.round(COUNT / 2)),
        once: async () => void (await loginWithKey(svc.url, key)),
      },
      {
        // What a `connect-storm` client costs after its sign-in, with the close it makes later.
        name: 'connection (upgrade + subscription + close)',
        count: Math.max(1, Math.round(COUNT / 2)),
        once: () => connectionCycle(svc.url, alice, SUBSCRIPTION, { s: workspace }),
      },
    ];
    for (const c of cases) if (!ONLY || ONLY.includes(c.name)) await measureCase(svc.proc.pid, c);
  } finally {
    await svc.proc.stop();
    await backend.drop();
  }

  if (!ONLY || ONLY.includes('references')) await references(opts, measureCase, launched);
  fs.rmSync(dir, { recursive: true, force: true });
  return {
    scenario: 'instructions',
    database: opts.pg ? 'postgres' : 'sqlite',
    rows,
    targets: [],
    notes,
  };
}

/** The bare Fastify routes of `graphql-http` and `send`, measured the same way. */
async function references(
  opts: Options,
  measureCase: (pid: number, c: Case) => Promise<void>,
  launched: ReturnType<typeof callgrindLaunch>,
): Promise<void> {
  const { launch, nodeArgs } = launched;
  const json = await startReference('fastify-json', {}, nodeArgs, launch);
  try {
    const body = JSON.stringify({ query: '{ serverInfo { version } }' });
    await measureCase(json.proc.pid, {
      name: 'reference: bare Fastify JSON route',
      count: COUNT,
      once: async () => void (await post(`${json.url}/api`, body)),
    });
  } finally {
    await json.proc.stop();
  }
  const store = await refEnv(opts.pg);
  const insert = await startReference('fastify-insert', store.env, nodeArgs, launch);
  try {
    const body = JSON.stringify({ conversationId: 'c', text: 'hello from the send benchmark' });
    await measureCase(insert.proc.pid, {
      name: 'reference: bare Fastify insert route',
      count: COUNT,
      once: async () => void (await post(`${insert.url}/send`, body)),
    });
  } finally {
    await insert.proc.stop();
    await store.cleanup();
  }
}
