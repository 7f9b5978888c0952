import {
  connectAll,
  DeliveryLog,
  referenceTarget,
  svcTarget,
  type FanoutTarget,
} from '../lib/fanout.js';
import { rssBytes, sleep } from '../lib/proc.js';
import { startReference } from '../lib/reference.js';
import type { ScenarioResult } from '../lib/report.js';
import { prepareWorkspace } from '../lib/setup.js';
import { createBackend, startSvc } from '../lib/svc.js';

import type { Options } from './fanout.js';

async function settledRss(pid: number): Promise<number> {
  for (let i = 0; i < 3; i++) {
    process.kill(pid, 'SIGUSR2');
    await sleep(700);
  }
  return rssBytes(pid);
}

async function measure(
  target: FanoutTarget,
  n: number,
): Promise<{ before: number; after: number }> {
  const before = await settledRss(target.pid);
  const subs = await connectAll(target, n, new DeliveryLog(), 200);
  await sleep(1000);
  const after = await settledRss(target.pid);
  for (const s of subs) s.close();
  await sleep(1500);
  return { before, after };
}

export async function idleConnections(opts: Options): Promise<ScenarioResult> {
  const rows: ScenarioResult['rows'] = [];
  const perConn: Record<string, number> = {};
  const backend = await createBackend(opts.pg);
  const svc = await startSvc(backend, {}, [
    '--require',
    new URL('../lib/gc-on-signal.cjs', import.meta.url).pathname,
  ]);
  const ref = await startReference('ws-envelope', {}, [
    '--expose-gc',
    '--require',
    new URL('../lib/gc-on-signal.cjs', import.meta.url).pathname,
  ]);
  try {
    const space = await prepareWorkspace(svc.url, 100);
    const targets = [
      svcTarget('svc', svc.proc.pid, svc.url, [space]),
      referenceTarget('reference', ref.proc.pid, ref.url, 1),
    ];
    for (const n of [1000, 10_000]) {
      for (const target of targets) {
        const m = await measure(target, n);
        const per = (m.after - m.before) / n;
        perConn[`${target.name}-${n}`] = per;
        rows.push({
          target: target.name,
          connections: n,
          rss_before_mib: m.before / 2 ** 20,
          rss_after_mib: m.after / 2 ** 20,
          kib_per_connection: per / 1024,
        });
      }
    }
  } finally {
    await svc.proc.stop();
    await ref.proc.stop();
    await backend.drop();
  }
  const at10k = (perConn['svc-10000'] as number) / 1024;
  return {
    scenario: 'idle-connections',
    database: opts.pg ? 'postgres' : 'sqlite',
    rows,
    targets: [
      {
        target: '<= 10 KiB RSS per connection (10,000)',
        met: at10k <= 10,
        detail: `${at10k.toFixed(1)} KiB`,
      },
    ],
  };
}
