import {
  DeliveryLog,
  connectAll,
  measureLatency,
  referenceTarget,
  svcTarget,
  warmUp,
  type FanoutTarget,
} from '../lib/fanout.js';
import { cpuSeconds, mainThreadCpuSeconds, sleep } from '../lib/proc.js';
import { startReference } from '../lib/reference.js';
import type { ScenarioResult } from '../lib/report.js';
import { prepareWorkspace, type Space } from '../lib/setup.js';
import { createBackend, startSvc } from '../lib/svc.js';

export interface Options {
  pg: boolean;
}

/** Members per workspace: subscribers share these accounts (each connection its own socket). */
const MEMBERS = 20;

async function withTargets<T>(
  opts: Options,
  groups: number,
  fn: (svc: FanoutTarget, ref: FanoutTarget) => Promise<T>,
): Promise<T> {
  const backend = await createBackend(opts.pg);
  const svc = await startSvc(backend);
  const ref = await startReference('ws-envelope');
  try {
    const spaces: Space[] = [];
    for (let g = 0; g < groups; g++) spaces.push(await prepareWorkspace(svc.url, MEMBERS));
    return await fn(
      svcTarget('svc', svc.proc.pid, svc.url, spaces),
      referenceTarget('reference', ref.proc.pid, ref.url, groups),
    );
  } finally {
    await svc.proc.stop();
    await ref.proc.stop();
    await backend.drop();
  }
}

/**
 * Messages measured per target and size. A p99 needs more than 100 of them to be other than the
 * run's single worst message (of 50, the 99th percentile is the maximum).
 */
const LATENCY_MESSAGES = Number(process.env.BENCH_LATENCY_MESSAGES ?? 200);

export async function fanoutLatency(opts: Options): Promise<ScenarioResult> {
  const rows: ScenarioResult['rows'] = [];
  const byN: Record<number, { svc: number; ref: number }> = {};
  await withTargets(opts, 1, async (svc, ref) => {
    for (const n of [100, 1000]) {
      for (const target of [svc, ref]) {
        const log = new DeliveryLog();
        const subs = await connectAll(target, n, log);
        await warmUp(target, log, n);
        const cpu0 = cpuSeconds(target.pid);
        const lat = await measureLatency(target, log, n, LATENCY_MESSAGES, 5);
        const cpu = cpuSeconds(target.pid) - cpu0;
        rows.push({
          target: target.name,
          subscribers: n,
          send_answer_p50_ms: lat.ackP50,
          send_answer_max_ms: lat.ackMax,
          first_frame_p50_ms: lat.firstP50,
          p50_ms: lat.p50,
          p90_ms: lat.p90,
          p99_ms: lat.p99,
          lost: lat.lost,
          deliveries_per_cpu_s: Math.round((LATENCY_MESSAGES * n) / Math.max(cpu, 0.01)),
        });
        (byN[n] ??= { svc: 0, ref: 0 })[target === svc ? 'svc' : 'ref'] = lat.p99;
        for (const s of subs) s.close();
        await sleep(500);
      }
    }
  });
  const n100 = byN[100] as { svc: number; ref: number };
  const n1000 = byN[1000] as { svc: number; ref: number };
  return {
    scenario: 'fanout-latency',
    database: opts.pg ? 'postgres' : 'sqlite',
    rows,
    targets: [
      { target: 'p99 <= 15 ms at N=100', met: n100.svc <= 15, detail: `${n100.svc.toFixed(2)} ms` },
      {
        target: 'p99 <= 50 ms at N=1000',
        met: n1000.svc <= 50,
        detail: `${n1000.svc.toFixed(2)} ms`,
      },
      // Issue 46: within 1.25x the bare `ws` reference measured in the same run, at both sizes.
      ...[
        [100, n100],
        [1000, n1000],
      ].map(([n, r]) => {
        const { svc: s, ref } = r as { svc: number; ref: number };
        return {
          target: `p99 <= 1.25x reference at N=${String(n)}`,
          met: s <= 1.25 * ref,
          detail: `${(s / ref).toFixed(2)}x (reference ${ref.toFixed(2)} ms)`,
        };
      }),
    ],
  };
}

async function burst(
  target: FanoutTarget,
  groups: number,
  perGroup: number,
  messagesPerGroup: number,
  senders: number,
) {
  const log = new DeliveryLog();
  const subs = await connectAll(target, groups * perGroup, log);
  await warmUp(target, log, perGroup, groups);
  const base = log.total;
  const cpu0 = cpuSeconds(target.pid);
  const main0 = mainThreadCpuSeconds(target.pid);
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: senders }, async (_, s) => {
      for (let k = 0; k < messagesPerGroup; k++) await target.send(s * 10_000 + k, s % groups);
    }),
  );
  const expected = senders * messagesPerGroup * perGroup;
  const complete = await log.waitTotal(base + expected);
  const seconds = (performance.now() - t0) / 1000;
  const cpu = cpuSeconds(target.pid) - cpu0;
  const mainCpu = mainThreadCpuSeconds(target.pid) - main0;
  for (const s of subs) s.close();
  await sleep(500);
  const delivered = log.total - base;
  return {
    delivered,
    expected,
    complete,
    seconds,
    cpu,
    mainCpu,
    perCpu: delivered / Math.max(cpu, 0.01),
  };
}

export async function fanoutBurst(opts: Options): Promise<ScenarioResult> {
  const rows: ScenarioResult['rows'] = [];
  const per: Record<string, number> = {};
  await withTargets(opts, 1, async (svc, ref) => {
    for (const target of [svc, ref]) {
      const r = await burst(target, 1, 1000, 200, 1);
      per[target.name] = r.perCpu;
      rows.push({
        target: target.name,
        messages: 200,
        subscribers: 1000,
        delivered: r.delivered,
        seconds: r.seconds,
        server_cpu_s: r.cpu,
        main_thread_cpu_s: r.mainCpu,
        deliveries_per_s: Math.round(r.delivered / r.seconds),
        deliveries_per_cpu_s: Math.round(r.perCpu),
      });
    }
  });
  const ratio = (per.svc as number) / (per.reference as number);
  return {
    scenario: 'fanout-burst',
    database: opts.pg ? 'postgres' : 'sqlite',
    rows,
    targets: [
      {
        target: '>= 50,000 deliveries per server CPU-second',
        met: (per.svc as number) >= 50_000,
        detail: `${Math.round(per.svc as number)}`,
      },
      {
        // The first round's target was 60%; issue 20 raised it to 80% in every run.
        target: '>= 80% of the reference',
        met: ratio >= 0.8,
        detail: `${(ratio * 100).toFixed(0)}%`,
      },
    ],
  };
}

export async function fanoutManyChannels(opts: Options): Promise<ScenarioResult> {
  const rows: ScenarioResult['rows'] = [];
  const per: Record<string, number> = {};
  await withTargets(opts, 10, async (svc, ref) => {
    for (const target of [svc, ref]) {
      const r = await burst(target, 10, 100, 20, 10);
      per[target.name] = r.perCpu;
      rows.push({
        target: target.name,
        channels: 10,
        subscribers: 1000,
        senders: 10,
        delivered: r.delivered,
        seconds: r.seconds,
        server_cpu_s: r.cpu,
        main_thread_cpu_s: r.mainCpu,
        deliveries_per_cpu_s: Math.round(r.perCpu),
      });
    }
  });
  const ratio = (per.svc as number) / (per.reference as number);
  return {
    scenario: 'fanout-many-channels',
    database: opts.pg ? 'postgres' : 'sqlite',
    rows,
    targets: [
      {
        // The first round's target was 60%; issue 20 raised it to 70%.
        target: '>= 70% of the reference (same topology)',
        met: ratio >= 0.7,
        detail: `${(ratio * 100).toFixed(0)}%`,
      },
    ],
  };
}
