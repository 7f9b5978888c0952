import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

import pg from 'pg';

import { gql, signup, type Session } from '../lib/client.js';
import { httpLoad } from '../lib/http-load.js';
import { cpuSeconds, percentile, postgresCpuSeconds } from '../lib/proc.js';
import { statementMeter, statementNotes } from '../lib/pg-statements.js';
import { startReference } from '../lib/reference.js';
import type { ScenarioResult } from '../lib/report.js';
import { SEND } from '../lib/setup.js';
import { createBackend, PG_URL, startSvc } from '../lib/svc.js';

import type { Options } from './fanout.js';

export const SEND_SECONDS = 5;
const SECONDS = SEND_SECONDS;
/** The text every send benchmark sends (svc's and the XMPP peers'). */
export const SEND_TEXT = 'hello from the send benchmark';
const run = promisify(execFile);
const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');

/**
 * A warm-up's floor in messages: on a busy machine its second may be a few dozen sends, too few
 * for the server's code to be compiled before the measured phase.
 */
export const WARMUP_MESSAGES = 500;

/** Each sender sends one message at a time for `seconds`, and on until `atLeast` were answered. */
async function svcSend(
  base: string,
  senders: { s: Session; conv: string }[],
  seconds: number,
  atLeast = 0,
) {
  const latencies: number[] = [];
  let errors = 0;
  const end = performance.now() + seconds * 1000;
  await Promise.all(
    senders.map(async ({ s, conv }) => {
      while (performance.now() < end || latencies.length + errors < atLeast) {
        const t = performance.now();
        try {
          await gql(base, SEND, { i: { conversationId: conv, text: SEND_TEXT } }, s);
          latencies.push(performance.now() - t);
        } catch {
          errors++;
        }
      }
    }),
  );
  return {
    perSecond: latencies.length / seconds,
    p99: percentile(latencies, 99),
    errors,
    sent: latencies.length,
  };
}

/**
 * PostgreSQL's CPU from now until the returned function is called, per message (`--pg` only:
 * nothing otherwise). The database shares the two cores with the server and the load, so a
 * send's cost is both processes' time.
 */
export function databaseMeter(
  usePg: boolean,
): (messages: number) => { database_cpu_s?: number; database_ms_per_message?: number } {
  if (!usePg) return () => ({});
  const before = postgresCpuSeconds();
  return (messages) => {
    const cpu = postgresCpuSeconds() - before;
    return {
      database_cpu_s: Number(cpu.toFixed(2)),
      database_ms_per_message: Number(((cpu * 1000) / Math.max(messages, 1)).toFixed(3)),
    };
  };
}

/** A fresh store for a reference program: a PostgreSQL schema, or a SQLite file. */
export async function refEnv(
  usePg: boolean,
): Promise<{ env: Record<string, string>; cleanup: () => Promise<void> }> {
  if (usePg) {
    const schema = `bench_ref_${Date.now().toString(36)}`;
    const admin = async (q: string) => {
      const c = new pg.Client({ connectionString: PG_URL });
      await c.connect();
      await c.query(q);
      await c.end();
    };
    await admin(`create schema ${schema}`);
    const url = new URL(PG_URL);
    url.searchParams.set('options', `-c search_path=${schema}`);
    return {
      env: { BENCH_PG_URL: url.toString() },
      cleanup: () => admin(`drop schema ${schema} cascade`),
    };
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-ref-'));
  return {
    env: { BENCH_SQLITE_FILE: path.join(dir, 'ref.sqlite') },
    cleanup: async () => fs.rmSync(dir, { recursive: true, force: true }),
  };
}

/**
 * svc's own phase of `send`: 8 and 32 people, each sending to a channel of their own, one
 * message at a time; messages a second, p99 and the server's CPU (with PostgreSQL's, `--pg`).
 */
export async function svcSendPhase(usePg: boolean): Promise<{
  rows: ScenarioResult['rows'];
  figures: Record<string, { rate: number; p99: number }>;
  notes: string[];
}> {
  const rows: ScenarioResult['rows'] = [];
  const notes: string[] = [];
  const figures: Record<string, { rate: number; p99: number }> = {};
  const backend = await createBackend(usePg);
  const svc = await startSvc(backend);
  try {
    const senders: { s: Session; conv: string }[] = [];
    for (let i = 0; i < 32; i++) {
      const s = await signup(svc.url, `snd${i}${Date.now().toString(36)}`);
      const ws = await gql(
        svc.url,
        'mutation($i: CreateWorkspaceInput!) { createWorkspace(input: $i) { channels { id } } }',
        { i: { name: `send ${i}` } },
        s,
      );
      senders.push({ s, conv: ws.data.createWorkspace.channels[0].id });
    }
    for (const clients of [8, 32]) {
      await svcSend(svc.url, senders.slice(0, clients), 1, WARMUP_MESSAGES);
      const cpu0 = cpuSeconds(svc.proc.pid);
      const database = databaseMeter(usePg);
      const statements = await statementMeter(usePg);
      const r = await svcSend(svc.url, senders.slice(0, clients), SECONDS);
      const cpu = cpuSeconds(svc.proc.pid) - cpu0;
      if (statements)
        notes.push(...statementNotes(`svc, ${clients} clients`, await statements(r.sent)));
      figures[`svc-${clients}`] = { rate: r.perSecond, p99: r.p99 };
      rows.push({
        target: 'svc sendMessage',
        clients,
        messages_per_s: Math.round(r.perSecond),
        p99_ms: r.p99,
        errors: r.errors,
        server_cpu_s: cpu,
        messages_per_cpu_s: Math.round(r.sent / Math.max(cpu, 0.01)),
        ...database(r.sent),
      });
    }
  } finally {
    await svc.proc.stop();
    await backend.drop();
  }
  return { rows, figures, notes };
}

export async function send(opts: Options): Promise<ScenarioResult> {
  const { rows, figures, notes } = await svcSendPhase(opts.pg);
  for (const clients of [8, 32]) {
    const loop = await refEnv(opts.pg);
    try {
      const database = databaseMeter(opts.pg);
      const { stdout } = await run(
        process.execPath,
        ['--import', 'tsx', path.join(root, 'bench/reference/insert-loop.ts')],
        {
          env: { ...process.env, ...loop.env, CLIENTS: String(clients), SECONDS: String(SECONDS) },
        },
      );
      const r = JSON.parse(stdout.trim().split('\n').pop() as string) as {
        inserted: number;
        perSecond: number;
        p99: number;
      };
      figures[`loop-${clients}`] = { rate: r.perSecond, p99: r.p99 };
      rows.push({
        target: 'bare insert loop',
        clients,
        messages_per_s: Math.round(r.perSecond),
        p99_ms: r.p99,
        ...database(r.inserted),
      });
    } finally {
      await loop.cleanup();
    }
    const route = await refEnv(opts.pg);
    const ref = await startReference('fastify-insert', route.env);
    try {
      const body = JSON.stringify({ conversationId: 'c', text: SEND_TEXT });
      await httpLoad(`${ref.url}/send`, body, {}, clients, 1);
      const cpu0 = cpuSeconds(ref.proc.pid);
      const database = databaseMeter(opts.pg);
      const statements = await statementMeter(opts.pg);
      const r = await httpLoad(`${ref.url}/send`, body, {}, clients, SECONDS);
      const cpu = cpuSeconds(ref.proc.pid) - cpu0;
      if (statements) {
        notes.push(
          ...statementNotes(`bare route, ${clients} clients`, await statements(r.requests)),
        );
      }
      rows.push({
        target: 'bare Fastify insert route',
        clients,
        messages_per_s: Math.round(r.perSecond),
        p99_ms: r.p99,
        errors: r.errors,
        server_cpu_s: cpu,
        messages_per_cpu_s: Math.round(r.requests / Math.max(cpu, 0.01)),
        ...database(r.requests),
      });
    } finally {
      await ref.proc.stop();
      await route.cleanup();
    }
  }
  if (opts.pg) {
    // The driver, measured apart (docs/decisions.md, "The PostgreSQL driver"): a send's shape
    // (two primary-key reads, then an insert) from a pool of 10, as the server's, at 32 clients.
    const drivers: Array<[string, Record<string, string>]> = [
      ['node-postgres, unnamed', {}],
      ['node-postgres, named statements', { BENCH_PG_NAMED: '1' }],
      ['Postgres.js, pipelined', { BENCH_PG_DRIVER: 'postgres.js' }],
    ];
    for (const [name, env] of drivers) {
      const loop = await refEnv(true);
      try {
        const database = databaseMeter(true);
        const { stdout } = await run(
          process.execPath,
          ['--import', 'tsx', path.join(root, 'bench/reference/insert-loop.ts')],
          {
            env: {
              ...process.env,
              ...loop.env,
              ...env,
              BENCH_POOL: '10',
              BENCH_READS: '2',
              CLIENTS: '32',
              SECONDS: String(SECONDS),
            },
          },
        );
        const r = JSON.parse(stdout.trim().split('\n').pop() as string) as {
          inserted: number;
          perSecond: number;
          p99: number;
          cpuS: number;
        };
        rows.push({
          target: `driver: ${name}, 2 reads + insert`,
          clients: 32,
          messages_per_s: Math.round(r.perSecond),
          p99_ms: r.p99,
          server_cpu_s: r.cpuS,
          messages_per_cpu_s: Math.round(r.inserted / Math.max(r.cpuS, 0.01)),
          ...database(r.inserted),
        });
      } finally {
        await loop.cleanup();
      }
    }
  }
  const targets: ScenarioResult['targets'] = [];
  if (!opts.pg) {
    const s8 = figures['svc-8'] as { rate: number; p99: number };
    const s32 = figures['svc-32'] as { rate: number; p99: number };
    targets.push({
      target: '>= 3,000 msg/s on SQLite at 8 clients',
      met: s8.rate >= 3000,
      detail: `${Math.round(s8.rate)} msg/s (${Math.round(s32.rate)} at 32)`,
    });
    targets.push({
      target: 'p99 <= 25 ms at 32 clients',
      met: s32.p99 <= 25,
      detail: `${s8.p99.toFixed(1)} / ${s32.p99.toFixed(1)} ms (8 / 32 clients)`,
    });
  } else {
    for (const c of [8, 32]) {
      const ratio =
        (figures[`svc-${c}`] as { rate: number }).rate /
        (figures[`loop-${c}`] as { rate: number }).rate;
      targets.push({
        target: `>= 60% of the bare insert rate at ${c} clients`,
        met: ratio >= 0.6,
        detail: `${(ratio * 100).toFixed(0)}%`,
      });
    }
  }
  return {
    scenario: 'send',
    database: opts.pg ? 'postgres' : 'sqlite',
    rows,
    targets,
    ...(notes.length ? { notes } : {}),
  };
}
