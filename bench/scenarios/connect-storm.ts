import { gql, subscribe, type Subscriber } from '../lib/client.js';
import { DeliveryLog } from '../lib/fanout.js';
import { loginWithKey, signupWithKey, type KeyAccount } from '../lib/keys.js';
import { cpuSeconds, cpuSplit, cpuSplitSince, sleep } from '../lib/proc.js';
import { REFERENCE_SPEED_AT_TARGET, referenceSpeed } from '../lib/reference.js';
import type { ScenarioResult } from '../lib/report.js';
import { SEND, SUBSCRIPTION, prepareWorkspace } from '../lib/setup.js';
import { createBackend, startSvc } from '../lib/svc.js';

import type { Options } from './fanout.js';

const CLIENTS = 1000;
const AT_ONCE = 50;

/**
 * 1,000 clients sign in with their device keys (challenge + signed statement), open /api/ws and
 * subscribe, 50 at a time. Accounts are made beforehand (signupWithKey with a workspace invite);
 * a message every subscriber receives proves every subscription was live.
 */
export async function connectStorm(opts: Options): Promise<ScenarioResult> {
  // The machine's speed, measured first (issue 46 scales the CPU target by it).
  const refSpeed = await referenceSpeed();
  const scaledCpu = (2 * REFERENCE_SPEED_AT_TARGET) / refSpeed;
  const backend = await createBackend(opts.pg);
  const svc = await startSvc(backend);
  const rows: ScenarioResult['rows'] = [];
  let seconds = 0;
  let cpu = 0;
  let received = 0;
  try {
    const space = await prepareWorkspace(svc.url, 1);
    const inv = await gql(
      svc.url,
      'mutation($i: CreateWorkspaceInviteInput!) { createWorkspaceInvite(input: $i) { token } }',
      { i: { serverId: space.serverId, maxUses: CLIENTS + 10 } },
      space.owner,
    );
    const token = inv.data.createWorkspaceInvite.token as string;
    const accounts: KeyAccount[] = [];
    for (let i = 0; i < CLIENTS; i += 20) {
      accounts.push(
        ...(await Promise.all(
          Array.from({ length: Math.min(20, CLIENTS - i) }, (_, j) =>
            signupWithKey(svc.url, `storm${i + j}x${Date.now().toString(36)}`, token),
          ),
        )),
      );
    }
    /** Every account signs in and subscribes, AT_ONCE at a time. */
    const storm = async (record: Parameters<typeof subscribe>[4]) => {
      const subs: Subscriber[] = [];
      for (let i = 0; i < CLIENTS; i += AT_ONCE) {
        subs.push(
          ...(await Promise.all(
            accounts.slice(i, i + AT_ONCE).map(async (a) => {
              const session = await loginWithKey(svc.url, a);
              return subscribe(svc.url, session, SUBSCRIPTION, { s: space.serverId }, record);
            }),
          )),
        );
      }
      return subs;
    };
    // BENCH_STORM_WARM=1: a first storm, closed, before the one measured, so the measured one
    // meets compiled code (a storm after a network blip) instead of a fresh process's (a restart).
    if (process.env.BENCH_STORM_WARM) {
      for (const s of await storm(() => {})) s.close();
      await sleep(2000);
    }
    const log = new DeliveryLog();
    const cpu0 = cpuSeconds(svc.proc.pid);
    const split0 = cpuSplit(svc.proc.pid);
    const t0 = performance.now();
    const subs = await storm(log.record);
    seconds = (performance.now() - t0) / 1000;
    cpu = cpuSeconds(svc.proc.pid) - cpu0;
    const split = cpuSplitSince(split0, cpuSplit(svc.proc.pid));
    await gql(
      svc.url,
      SEND,
      { i: { conversationId: space.channelId, text: 'bench-1-storm' } },
      space.owner,
    );
    await log.waitFor(1, CLIENTS, 20_000);
    received = log.count.get(1) ?? 0;
    for (const s of subs) s.close();
    await sleep(500);
    rows.push({
      clients: CLIENTS,
      at_once: AT_ONCE,
      after_a_first_storm: Boolean(process.env.BENCH_STORM_WARM),
      seconds,
      server_cpu_s: cpu,
      // Where that CPU went: the event loop's thread, then V8's helpers and the thread pool;
      // system time is the kernel's work for the process (sockets, commits' fdatasync).
      main_thread_user_s: split.mainUser,
      main_thread_system_s: split.mainSystem,
      other_threads_user_s: split.otherUser,
      other_threads_system_s: split.otherSystem,
      subscribed_and_received: received,
    });
  } finally {
    await svc.proc.stop();
    await backend.drop();
  }
  return {
    scenario: 'connect-storm',
    database: opts.pg ? 'postgres' : 'sqlite',
    rows,
    targets: [
      {
        target: 'all subscribed in <= 3 s',
        met: seconds <= 3 && received === CLIENTS,
        detail: `${seconds.toFixed(2)} s, ${received}/${CLIENTS} live`,
      },
      { target: '<= 2 server CPU-seconds', met: cpu <= 2, detail: `${cpu.toFixed(2)} s` },
      {
        target: `<= 2 CPU-s x (${REFERENCE_SPEED_AT_TARGET} / reference route ${Math.round(refSpeed)} req/s)`,
        met: cpu <= scaledCpu,
        detail: `${cpu.toFixed(2)} s against ${scaledCpu.toFixed(2)} s`,
      },
    ],
    notes: [`reference JSON route: ${Math.round(refSpeed)} req/s in this run`],
  };
}
