import { FaultProxy } from '../../test/_util/fault-proxy.js';
import { gql, type Session } from '../lib/client.js';
import { percentile, sleep } from '../lib/proc.js';
import type { ScenarioResult } from '../lib/report.js';
import { prepareWorkspace, SEND } from '../lib/setup.js';
import { createBackend, REDIS_URL, startSvc, type SvcServer } from '../lib/svc.js';

const SENDERS = 4;
const SECONDS = 6;
/** When the cut starts, into a phase: sends are under way when the connection breaks. */
const CUT_AFTER_MS = 1_500;
/** The server's SVC_REDIS_TIMEOUT_MS (its default): a send that waited for Redis took that long. */
const REDIS_TIMEOUT_MS = 2_000;

interface Phase {
  name: string;
  latencies: number[];
  errors: number;
}

/** `SENDERS` people sending one message after the other for `SECONDS`; `during` runs meanwhile. */
async function sending(
  name: string,
  server: SvcServer,
  senders: Session[],
  channelId: string,
  during: () => Promise<void> = async () => {},
): Promise<Phase> {
  const phase: Phase = { name, latencies: [], errors: 0 };
  const end = performance.now() + SECONDS * 1000;
  await Promise.all([
    ...senders.map(async (s) => {
      while (performance.now() < end) {
        const t = performance.now();
        try {
          const res = await gql(
            server.url,
            SEND,
            { i: { conversationId: channelId, text: 'sent while Redis comes and goes' } },
            s,
          );
          if (res.errors) phase.errors++;
          else phase.latencies.push(performance.now() - t);
        } catch {
          phase.errors++;
        }
      }
    }),
    during(),
  ]);
  return phase;
}

const row = (p: Phase) => ({
  phase: p.name,
  sends: p.latencies.length,
  errors: p.errors,
  p50_ms: percentile(p.latencies, 50),
  p99_ms: percentile(p.latencies, 99),
  max_ms: Math.max(...p.latencies),
});

/**
 * Sends while Redis goes away (issue 49): one server on PostgreSQL and Redis, Redis reached
 * through a TCP proxy that cuts it (reset and refused, then stalled) while people send; beside
 * it the same server without Redis, and with Redis reachable. A request never waits for Redis:
 * no send while it is cut may take the Redis timeout, nor be slower than without Redis.
 */
export async function redisOutage(): Promise<ScenarioResult> {
  const phases: Phase[] = [];

  const bare = await createBackend(true);
  const { SVC_REDIS_URL: _unused, SVC_REDIS_PREFIX: _prefix, ...withoutRedis } = bare.env;
  const alone = await startSvc({ ...bare, env: withoutRedis });
  try {
    const space = await prepareWorkspace(alone.url, SENDERS);
    await sending('warm-up', alone, space.members, space.channelId);
    phases.push(await sending('PostgreSQL, no Redis', alone, space.members, space.channelId));
  } finally {
    await alone.proc.stop();
    await bare.drop();
  }

  const target = new URL(REDIS_URL);
  const proxy = await FaultProxy.start(target.hostname, Number(target.port || 6379));
  const backend = await createBackend(true);
  const server = await startSvc(backend, {
    SVC_REDIS_URL: proxy.rewrite(REDIS_URL),
    SVC_REDIS_TIMEOUT_MS: String(REDIS_TIMEOUT_MS),
  });
  try {
    const space = await prepareWorkspace(server.url, SENDERS);
    const send = (name: string, during?: () => Promise<void>) =>
      sending(name, server, space.members, space.channelId, during);
    await send('warm-up');
    phases.push(await send('Redis reachable'));
    phases.push(
      await send('Redis reset and refused', async () => {
        await sleep(CUT_AFTER_MS);
        await proxy.refuse();
      }),
    );
    await proxy.pass();
    await sleep(3_000);
    phases.push(
      await send('Redis stalled', async () => {
        await sleep(CUT_AFTER_MS);
        proxy.stall();
      }),
    );
    await proxy.pass();
    await sleep(3_000);
    phases.push(await send('Redis back'));
  } finally {
    await server.proc.stop();
    await backend.drop();
    await proxy.close();
  }

  const measured = phases.filter((p) => p.name !== 'warm-up');
  const byName = new Map(measured.map((p) => [p.name, row(p)]));
  const without = byName.get('PostgreSQL, no Redis')!;
  const cut = ['Redis reset and refused', 'Redis stalled'].map((n) => byName.get(n)!);
  const slowest = Math.max(...cut.map((r) => r.max_ms));
  const worstP99 = Math.max(...cut.map((r) => r.p99_ms));
  return {
    scenario: 'redis-outage',
    database: 'postgres',
    rows: [...byName.values()],
    targets: [
      {
        target: `no send while Redis is cut waits for its timeout (${REDIS_TIMEOUT_MS} ms)`,
        met: slowest < REDIS_TIMEOUT_MS / 2,
        detail: `slowest ${slowest.toFixed(1)} ms`,
      },
      {
        target: 'p99 while Redis is cut <= 1.5 x p99 without Redis',
        met: worstP99 <= 1.5 * without.p99_ms,
        detail: `${worstP99.toFixed(1)} ms against ${without.p99_ms.toFixed(1)} ms`,
      },
      {
        target: 'every send answered',
        met: measured.every((p) => p.errors === 0),
        detail: `${measured.reduce((n, p) => n + p.errors, 0)} errors`,
      },
    ],
    notes: [
      `${SENDERS} senders one message after the other, ${SECONDS} s a phase; the cut starts ` +
        `${CUT_AFTER_MS} ms into its phase, with sends under way`,
    ],
  };
}
