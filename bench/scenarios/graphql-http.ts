import { signup } from '../lib/client.js';
import { httpLoad } from '../lib/http-load.js';
import { cpuSeconds } from '../lib/proc.js';
import { startReference } from '../lib/reference.js';
import type { ScenarioResult } from '../lib/report.js';
import { createBackend, startSvc } from '../lib/svc.js';

import type { Options } from './fanout.js';

const SECONDS = 5;
const CONNECTIONS = 50;

export async function graphqlHttp(opts: Options): Promise<ScenarioResult> {
  const rows: ScenarioResult['rows'] = [];
  const backend = await createBackend(opts.pg);
  const svc = await startSvc(backend);
  const ref = await startReference('fastify-json');
  const rate: Record<string, number> = {};
  try {
    // One person per connection, as a server's users are: requests that arrive together carry
    // different sessions.
    const people = [];
    for (let i = 0; i < CONNECTIONS; i++) {
      people.push(await signup(svc.url, `bench${i}${Date.now().toString(36)}`));
    }
    const cases: {
      name: string;
      url: string;
      pid: number;
      body: string;
      headers: Record<string, string> | Array<Record<string, string>>;
    }[] = [
      {
        name: 'serverInfo (anonymous)',
        url: `${svc.url}/api`,
        pid: svc.proc.pid,
        body: JSON.stringify({
          query: '{ serverInfo { version apiVersion signupRequiresKeys features { key state } } }',
        }),
        headers: {},
      },
      {
        name: 'me (signed in)',
        url: `${svc.url}/api`,
        pid: svc.proc.pid,
        body: JSON.stringify({ query: '{ me { id username displayName } }' }),
        headers: people.map((p) => ({ cookie: p.cookie })),
      },
      {
        name: 'reference JSON route',
        url: `${ref.url}/api`,
        pid: ref.proc.pid,
        body: JSON.stringify({ query: '{ serverInfo { version } }' }),
        headers: {},
      },
    ];
    for (const c of cases) {
      await httpLoad(c.url, c.body, c.headers, CONNECTIONS, 1); // warm-up
      const cpu0 = cpuSeconds(c.pid);
      const r = await httpLoad(c.url, c.body, c.headers, CONNECTIONS, SECONDS);
      const cpu = cpuSeconds(c.pid) - cpu0;
      rate[c.name] = r.perSecond;
      rows.push({
        case: c.name,
        requests_per_s: Math.round(r.perSecond),
        p50_ms: r.p50,
        p99_ms: r.p99,
        errors: r.errors,
        server_cpu_s: cpu,
        requests_per_cpu_s: Math.round(r.requests / Math.max(cpu, 0.01)),
      });
    }
  } finally {
    await svc.proc.stop();
    await ref.proc.stop();
    await backend.drop();
  }
  const refRate = rate['reference JSON route'] as number;
  const si = (rate['serverInfo (anonymous)'] as number) / refRate;
  const me = (rate['me (signed in)'] as number) / refRate;
  return {
    scenario: 'graphql-http',
    database: opts.pg ? 'postgres' : 'sqlite',
    rows,
    targets: [
      {
        target: 'serverInfo >= 40% of the reference',
        met: si >= 0.4,
        detail: `${(si * 100).toFixed(0)}%`,
      },
      {
        // The target on PostgreSQL; the first round's on SQLite.
        target: `me >= ${opts.pg ? 35 : 25}% of the reference`,
        met: me >= (opts.pg ? 0.35 : 0.25),
        detail: `${(me * 100).toFixed(0)}%`,
      },
    ],
  };
}
