import { gql, post, subscribe, type Session, type Subscriber } from './client.js';
import { percentile, sleep } from './proc.js';
import { SEND, SUBSCRIPTION, type Space } from './setup.js';

/** Where subscribers connect and how one marked message is sent: svc or the bare reference. */
export interface FanoutTarget {
  name: string;
  pid: number;
  connect(i: number, onNext: (raw: string, at: number) => void): Promise<Subscriber>;
  send(marker: number, group?: number): Promise<void>;
}

export function svcTarget(
  name: string,
  pid: number,
  base: string,
  spaces: Space[],
  sendBase = base,
): FanoutTarget {
  return {
    name,
    pid,
    connect(i, onNext) {
      const space = spaces[i % spaces.length] as Space;
      const member = space.members[Math.floor(i / spaces.length) % space.members.length] as Session;
      return subscribe(base, member, SUBSCRIPTION, { s: space.serverId }, onNext);
    },
    async send(marker, group = 0) {
      const space = spaces[group % spaces.length] as Space;
      await gql(
        sendBase,
        SEND,
        { i: { conversationId: space.channelId, text: `bench-${marker}-x` } },
        space.owner,
      );
    },
  };
}

export function referenceTarget(
  name: string,
  pid: number,
  base: string,
  groups: number,
): FanoutTarget {
  return {
    name,
    pid,
    connect(i, onNext) {
      return subscribe(base, null, SUBSCRIPTION, { serverId: `g${i % groups}` }, onNext);
    },
    async send(marker, group = 0) {
      const data = {
        workspaceEvents: {
          type: 'MessageCreated',
          conversationId: 'c',
          payload: { text: `bench-${marker}-x` },
        },
      };
      await post(`${base}/publish`, JSON.stringify({ channel: `g${group % groups}`, data }));
    },
  };
}

/** Tracks, per marked message, how many subscribers got it and when the last one did. */
export class DeliveryLog {
  readonly count = new Map<number, number>();
  readonly first = new Map<number, number>();
  readonly last = new Map<number, number>();
  total = 0;
  record = (raw: string, at: number): void => {
    const m = /bench-(\d+)-/.exec(raw);
    if (!m) return;
    const k = Number(m[1]);
    this.count.set(k, (this.count.get(k) ?? 0) + 1);
    if (!this.first.has(k)) this.first.set(k, at);
    this.last.set(k, at);
    this.total++;
  };
  async waitFor(k: number, n: number, timeoutMs = 30_000): Promise<boolean> {
    const deadline = performance.now() + timeoutMs;
    while ((this.count.get(k) ?? 0) < n) {
      if (performance.now() > deadline) return false;
      await sleep(1);
    }
    return true;
  }
  async waitTotal(n: number, timeoutMs = 120_000): Promise<boolean> {
    const deadline = performance.now() + timeoutMs;
    while (this.total < n) {
      if (performance.now() > deadline) return false;
      await sleep(5);
    }
    return true;
  }
}

/** Opens n subscribers, `parallel` at a time. */
export async function connectAll(
  target: FanoutTarget,
  n: number,
  log: DeliveryLog,
  parallel = 50,
): Promise<Subscriber[]> {
  const subs: Subscriber[] = [];
  for (let i = 0; i < n; i += parallel) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(parallel, n - i) }, (_, j) =>
        target.connect(i + j, log.record),
      ),
    );
    subs.push(...batch);
  }
  return subs;
}

/** Sends marker messages until every subscriber of each group has one: all subscriptions live. */
export async function warmUp(
  target: FanoutTarget,
  log: DeliveryLog,
  perGroup: number,
  groups = 1,
  base = 1_000_000,
): Promise<void> {
  for (let g = 0; g < groups; g++) {
    for (let attempt = 0; attempt < 50; attempt++) {
      const k = base + g * 100 + attempt;
      await target.send(k, g);
      if (await log.waitFor(k, perGroup, 2000)) break;
    }
  }
}

export interface LatencyFigures {
  p50: number;
  p90: number;
  p99: number;
  lost: number;
  /**
   * Where the median goes: the send's own answer (for svc a durable send: its transaction and
   * the disk's sync; for the reference a publish that writes nothing), the first subscriber's
   * frame and the last one's, each from the send's start.
   */
  ackP50: number;
  firstP50: number;
  /** The slowest message's answer, to tell a stalled send from a stalled delivery. */
  ackMax: number;
}

/** Sends `count` messages at `perSecond`; latency = send start to the last subscriber's frame. */
export async function measureLatency(
  target: FanoutTarget,
  log: DeliveryLog,
  n: number,
  count: number,
  perSecond: number,
): Promise<LatencyFigures> {
  const latencies: number[] = [];
  const acks: number[] = [];
  const firsts: number[] = [];
  let lost = 0;
  const gap = 1000 / perSecond;
  for (let k = 0; k < count; k++) {
    const started = performance.now();
    await target.send(k);
    acks.push(performance.now() - started);
    if (await log.waitFor(k, n, 10_000)) {
      latencies.push((log.last.get(k) as number) - started);
      firsts.push((log.first.get(k) as number) - started);
    } else lost++;
    const spent = performance.now() - started;
    if (spent < gap) await sleep(gap - spent);
  }
  return {
    p50: percentile(latencies, 50),
    p90: percentile(latencies, 90),
    p99: percentile(latencies, 99),
    lost,
    ackP50: percentile(acks, 50),
    firstP50: percentile(firsts, 50),
    ackMax: Math.max(...acks),
  };
}
