import { DeliveryLog, connectAll, measureLatency, svcTarget, warmUp } from '../lib/fanout.js';
import { sleep } from '../lib/proc.js';
import type { ScenarioResult } from '../lib/report.js';
import { prepareWorkspace } from '../lib/setup.js';
import { createBackend, startSvc } from '../lib/svc.js';

const N = 100;

/** Two processes on one PostgreSQL and one Redis: senders on A, subscribers on B. */
export async function multiprocess(): Promise<ScenarioResult> {
  const backend = await createBackend(true);
  const a = await startSvc(backend);
  const b = await startSvc(backend);
  const rows: ScenarioResult['rows'] = [];
  const p99: Record<string, number> = {};
  try {
    const space = await prepareWorkspace(a.url, 20);
    const layouts = [
      { name: 'one process (A -> A)', target: svcTarget('one', a.proc.pid, a.url, [space], a.url) },
      {
        name: 'two processes (A -> B)',
        target: svcTarget('two', b.proc.pid, b.url, [space], a.url),
      },
    ];
    for (const { name, target } of layouts) {
      const log = new DeliveryLog();
      const subs = await connectAll(target, N, log);
      await warmUp(target, log, N);
      const lat = await measureLatency(target, log, N, 50, 5);
      p99[name] = lat.p99;
      rows.push({
        layout: name,
        subscribers: N,
        p50_ms: lat.p50,
        p90_ms: lat.p90,
        p99_ms: lat.p99,
        lost: lat.lost,
      });
      for (const s of subs) s.close();
      await sleep(500);
    }
  } finally {
    await a.proc.stop();
    await b.proc.stop();
    await backend.drop();
  }
  const added = (p99['two processes (A -> B)'] as number) - (p99['one process (A -> A)'] as number);
  return {
    scenario: 'multiprocess',
    database: 'postgres',
    rows,
    targets: [
      { target: 'p99 added by the hop <= 5 ms', met: added <= 5, detail: `${added.toFixed(2)} ms` },
    ],
  };
}
