import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';

import { startDns } from '../../test/link-previews/_netns-env.js';
import { gql, signup, type Session } from '../lib/client.js';
import { freePort, mainThreadCpuSeconds } from '../lib/proc.js';
import type { ScenarioResult } from '../lib/report.js';
import { SEND } from '../lib/setup.js';
import { createBackend, startSvc } from '../lib/svc.js';

// `previews`: 1,000 messages, each with a link to a page server, sent with link previews off and
// with them on; the send rate with previews on must stay within 10% of the rate with them off,
// and the server's event-loop delay p99 under 20 ms while the previews are fetched. One run
// sends for about a second, and runs of the same code differ by more than what previews cost, so
// the scenario makes ROUNDS runs of each, alternating (off/on, then on/off, ...), and compares
// medians. The delay is the server's `svc_event_loop_lag_seconds`: how late a timer due every
// 10 ms fired (Node's own histogram, also reported, counts the 10 ms interval in). The page server
// must be on a public address, so the scenario reruns itself in a network namespace of its own
// (`unshare --net --mount`, as root) where 93.184.216.34 is on the loopback device and a DNS
// server of its own answers `www.example-site.com`. SQLite only: the namespace has no
// PostgreSQL. Besides the targets, each run reports how many pages were fetched while the sends
// ran and the CPU time of the server's main thread over the sends: on a shared machine the rates
// move with the neighbours' load, the CPU per send much less.

const MESSAGES = 1000;
const SENDERS = 8;
const ROUNDS = 5;
const WARMUP = 300;
const PAGE_ADDR = '93.184.216.34';
const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');

interface Run {
  perSecond: number;
  fetched: number;
  /** Pages fetched before the last send was answered. */
  fetchedDuringSends: number;
  /** CPU milliseconds of the server's main thread while the sends ran. */
  loopCpuMs: number;
  loopDelayP99Ms: number | null;
  /** Node's histogram of the time between the 10 ms timer's firings (the interval included). */
  timerIntervalP99Ms: number | null;
}

function sample(scrape: string, name: string): number | null {
  const line = scrape.split('\n').find((l) => l.startsWith(`${name} `));
  return line ? Number(line.split(' ')[1]) : null;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

function row(previews: boolean, round: number, run: Run): Record<string, string | number> {
  return {
    target: `previews ${previews ? 'on' : 'off'}, round ${round + 1}`,
    messages: MESSAGES,
    messages_per_s: Math.round(run.perSecond),
    pages_fetched: run.fetched,
    fetched_during_sends: run.fetchedDuringSends,
    server_loop_cpu_ms: Math.round(run.loopCpuMs),
    event_loop_delay_p99_ms: round1(run.loopDelayP99Ms),
    timer_interval_p99_ms: round1(run.timerIntervalP99Ms),
  };
}

const round1 = (v: number | null) => (v === null ? -1 : Math.round(v * 10) / 10);

async function oneRun(previews: boolean, round: number, hits: () => number): Promise<Run> {
  const backend = await createBackend(false);
  const metricsPort = await freePort();
  const svc = await startSvc(backend, {
    SVC_METRICS_ADDR: `127.0.0.1:${metricsPort}`,
    ...(previews ? {} : { SVC_FEATURES_DISABLED: 'link_previews' }),
  });
  const metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
  try {
    const senders: { s: Session; conv: string }[] = [];
    for (let i = 0; i < SENDERS; i++) {
      const s = await signup(svc.url, `prv${i}${Date.now().toString(36)}`);
      const ws = await gql(
        svc.url,
        'mutation($i: CreateWorkspaceInput!) { createWorkspace(input: $i) { channels { id } } }',
        { i: { name: `previews ${i}` } },
        s,
      );
      senders.push({ s, conv: ws.data.createWorkspace.channels[0].id });
    }
    const send = async (count: number, text: (i: number) => string) => {
      let next = 0;
      await Promise.all(
        senders.map(async ({ s, conv }) => {
          for (let i = next++; i < count; i = next++) {
            await gql(svc.url, SEND, { i: { conversationId: conv, text: text(i) } }, s);
          }
        }),
      );
    };
    // A fresh process compiles its hot paths during its first few hundred requests; messages
    // without links warm it (and this process's client) up before the measured window.
    await send(WARMUP, (i) => `warming up ${i}`);
    const before = hits();
    // The event-loop histograms restart at each scrape: this one opens the measured window.
    await fetch(metricsUrl).then((r) => r.text());
    const cpuBefore = mainThreadCpuSeconds(svc.proc.pid);
    const started = performance.now();
    await send(
      MESSAGES,
      (i) => `see http://www.example-site.com/p/${previews ? 'on' : 'off'}/${round}/${i}`,
    );
    const perSecond = MESSAGES / ((performance.now() - started) / 1000);
    const loopCpuMs = (mainThreadCpuSeconds(svc.proc.pid) - cpuBefore) * 1000;
    const fetchedDuringSends = hits() - before;
    const deadline = Date.now() + 30_000;
    while (previews && hits() - before < MESSAGES && Date.now() < deadline) {
      // Previews still arriving after the sends: the window covers the fetches too.
      await new Promise((r) => setTimeout(r, 100));
    }
    const scrape = await (await fetch(metricsUrl)).text();
    const lag = sample(scrape, 'svc_event_loop_lag_seconds');
    const interval = sample(scrape, 'svc_nodejs_eventloop_lag_p99_seconds');
    return {
      perSecond,
      fetched: hits() - before,
      fetchedDuringSends,
      loopCpuMs,
      loopDelayP99Ms: lag === null ? null : lag * 1000,
      timerIntervalP99Ms: interval === null ? null : interval * 1000,
    };
  } finally {
    await svc.proc.stop();
    await backend.drop();
  }
}

/** Inside the namespace: the page server, the DNS server, both runs. */
async function inside(): Promise<ScenarioResult> {
  const dns = await startDns({ 'www.example-site.com': [PAGE_ADDR] });
  let count = 0;
  const server = http.createServer((req, res) => {
    count++;
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(
      `<html><head><title>Page ${req.url}</title><meta property="og:description" content="A page"></head></html>`,
    );
  });
  await new Promise<void>((resolve) => server.listen(80, PAGE_ADDR, resolve));
  try {
    const off: Run[] = [];
    const on: Run[] = [];
    const rows: Record<string, string | number>[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      for (const previews of round % 2 ? [true, false] : [false, true]) {
        const run = await oneRun(previews, round, () => count);
        (previews ? on : off).push(run);
        rows.push(row(previews, round, run));
      }
    }
    const offRate = median(off.map((r) => r.perSecond));
    const onRate = median(on.map((r) => r.perSecond));
    const ratio = onRate / offRate;
    const delays = on.map((r) => r.loopDelayP99Ms);
    const delay = delays.includes(null) ? null : median(delays as number[]);
    const offDelays = off.map((r) => r.loopDelayP99Ms ?? Number.NaN);
    const fetched = Math.min(...on.map((r) => r.fetched));
    return {
      scenario: 'previews',
      database: 'sqlite',
      rows: [
        ...rows,
        {
          target: `median of ${ROUNDS}, previews off`,
          messages: MESSAGES,
          messages_per_s: Math.round(offRate),
          event_loop_delay_p99_ms: round1(median(offDelays)),
        },
        {
          target: `median of ${ROUNDS}, previews on`,
          messages: MESSAGES,
          messages_per_s: Math.round(onRate),
          event_loop_delay_p99_ms: round1(delay),
        },
      ],
      targets: [
        {
          target: 'send rate with previews within 10% of without (medians)',
          met: ratio >= 0.9,
          detail: `${(ratio * 100).toFixed(0)}%`,
        },
        {
          target: 'event-loop delay p99 < 20 ms while fetching (median)',
          met: delay !== null && delay < 20,
          detail: `${delay?.toFixed(1) ?? '?'} ms`,
        },
        {
          target: `every message previewed (${MESSAGES} pages fetched in every run)`,
          met: fetched >= MESSAGES,
          detail: String(fetched),
        },
      ],
    };
  } finally {
    server.close();
    dns.close();
  }
}

export async function previews(opts: { pg: boolean }): Promise<ScenarioResult> {
  if (opts.pg) throw new Error('previews runs on SQLite only (its namespace has no PostgreSQL)');
  if (process.env.SVC_BENCH_IN_NETNS === '1') return inside();
  if (process.getuid?.() !== 0) throw new Error('previews needs root (unshare --net)');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-netns-'));
  const resolv = path.join(dir, 'resolv.conf');
  const out = path.join(dir, 'result.json');
  fs.writeFileSync(resolv, 'nameserver 127.0.0.1\noptions timeout:1 attempts:1\n');
  const script = [
    'set -e',
    'ip link set lo up',
    `ip addr add ${PAGE_ADDR}/32 dev lo`,
    `mount --bind ${resolv} /etc/resolv.conf`,
    `exec node --import tsx ${path.join(root, 'bench/scenarios/previews-inner.ts')} ${out}`,
  ].join('\n');
  try {
    await new Promise<void>((resolve, reject) => {
      const child = spawn('unshare', ['--net', '--mount', '--', 'sh', '-c', script], {
        cwd: root,
        env: { ...process.env, SVC_BENCH_IN_NETNS: '1' },
        stdio: 'inherit',
      });
      child.on('error', reject);
      child.on('close', (code) =>
        code === 0 ? resolve() : reject(new Error(`namespace run exited ${code}`)),
      );
    });
    return JSON.parse(fs.readFileSync(out, 'utf8')) as ScenarioResult;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** The namespace's entry (previews-inner.ts). */
export async function runInside(out: string): Promise<void> {
  fs.writeFileSync(out, JSON.stringify(await inside()));
}
