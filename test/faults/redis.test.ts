import pino from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

import type { BusEvent } from '../../src/events/bus.js';
import { RedisBus } from '../../src/events/redis-bus.js';
import { TEST_DB } from '../_util/app.js';
import { FaultProxy, sleep } from '../_util/fault-proxy.js';
import { redisTestPrefix } from '../_util/redis.js';
import {
  Collected,
  createWorkspace,
  modernClient,
  startRealtime,
  WORKSPACE_EVENTS,
  type RealtimeTestServer,
} from '../realtime/_helpers.js';

const REDIS_URL = process.env.SVC_TEST_REDIS_URL;
const silent = pino({ level: 'silent' });

/** Resolves once `check` holds, or fails after `ms`. */
async function until(check: () => boolean, ms = 8000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await sleep(20);
  }
}

// The bus does not depend on the database: run once, in the SQLite project.
describe.skipIf(!REDIS_URL || TEST_DB !== 'sqlite')('Redis failures', () => {
  let proxy: FaultProxy;
  let prefix: string;
  // `faulty` reaches Redis through the proxy; `other` stands for another server process.
  let faulty: RedisBus;
  let other: RedisBus;
  const seenByFaulty: number[] = [];
  const seenByOther: number[] = [];
  let resyncs = 0;
  const topic = 'conversation:faults';
  const event = (n: number): BusEvent => ({ topic, type: 'MessageCreated', at: n, payload: { n } });
  const n = (e: BusEvent) => (e.payload as { n: number }).n;

  beforeAll(async () => {
    const target = new URL(REDIS_URL!);
    proxy = await FaultProxy.start(target.hostname, Number(target.port || 6379));
    prefix = redisTestPrefix();
    faulty = await RedisBus.connect({
      url: proxy.rewrite(REDIS_URL!),
      prefix,
      log: silent,
      timeoutMs: 300,
    });
    other = await RedisBus.connect({ url: REDIS_URL!, prefix, log: silent });
    faulty.subscribe(topic, (e) => seenByFaulty.push(n(e)));
    other.subscribe(topic, (e) => seenByOther.push(n(e)));
    faulty.onResync(() => resyncs++);
    await Promise.all([faulty.whenSubscribed(topic), other.whenSubscribed(topic)]);
  });

  afterEach(async () => {
    await proxy.pass();
  });

  afterAll(async () => {
    await faulty?.close();
    await other?.close();
    await proxy?.close();
  });

  /** Publishes on `faulty` until both buses see it (the connection is back and subscribed). */
  async function expectFlowing(marker: number): Promise<void> {
    await until(() => resyncs > 0 || faulty.commands.status === 'ready');
    await faulty.publish(event(marker));
    await until(() => seenByOther.includes(marker) && seenByFaulty.includes(marker));
  }

  it('survives reset connections, resubscribes, and tells its clients to resync', async () => {
    await expectFlowing(1);
    const before = resyncs;
    proxy.reset();
    await until(() => resyncs > before);
    await expectFlowing(2);
  });

  it('holds events published while Redis is unreachable and delivers them once it is back', async () => {
    await expectFlowing(10);
    const before = resyncs;
    await proxy.refuse();
    await until(() => faulty.commands.status !== 'ready');
    let acknowledged = 0;
    const published = [11, 12, 13].map((k) => faulty.publish(event(k)).then(() => acknowledged++));
    expect(faulty.backlog()).toEqual({ held: 3, unacknowledged: 0 });
    // Meanwhile another process publishes: this process cannot receive it...
    await other.publish(event(14));
    await sleep(200);
    expect(seenByFaulty).not.toContain(14);
    // A held event is not published yet: its promise (an outbox row's removal) waits.
    expect(acknowledged).toBe(0);

    await proxy.pass();
    // ...so once back it tells its clients to resync, and the held events reach everyone in order.
    await until(() => resyncs > before);
    await Promise.all(published);
    await until(() => [11, 12, 13].every((k) => seenByOther.includes(k)));
    const held = seenByOther.filter((k) => k >= 11 && k <= 13);
    expect(held).toEqual([11, 12, 13]);
    await expectFlowing(15);
  });

  it('renews stalled connections: publishes time out, are held, and are delivered after', async () => {
    await expectFlowing(20);
    const before = resyncs;
    proxy.stall();
    let acknowledged = false;
    const published = faulty.publish(event(21)).then(() => (acknowledged = true));
    // The PUBLISH times out (300 ms here) and is held; the heartbeat finds the stalled subscriber
    // connection.
    await sleep(1000);
    expect(acknowledged).toBe(false);
    expect(faulty.backlog().held).toBe(1);
    await proxy.pass();
    await until(() => resyncs > before);
    await published;
    await until(() => seenByOther.includes(21));
    await expectFlowing(22);
  });
});

describe.skipIf(!REDIS_URL || TEST_DB !== 'sqlite')('publishing through a broken path', () => {
  let proxy: FaultProxy;
  let prefix: string;
  const buses: RedisBus[] = [];
  const topic = 'conversation:publishing';
  const event = (n: number): BusEvent => ({ topic, type: 'MessageCreated', at: n, payload: { n } });
  const n = (e: BusEvent) => (e.payload as { n: number }).n;

  beforeAll(async () => {
    const target = new URL(REDIS_URL!);
    proxy = await FaultProxy.start(target.hostname, Number(target.port || 6379));
    prefix = redisTestPrefix();
  });
  afterEach(async () => {
    await proxy.pass();
  });
  afterAll(async () => {
    for (const bus of buses) await bus.close();
    await proxy?.close();
  });

  /** A bus through the proxy, and one straight to Redis that records what reaches `topic`. */
  async function pair(maxHeld?: number): Promise<{ faulty: RedisBus; seen: number[] }> {
    const faulty = await RedisBus.connect({
      url: proxy.rewrite(REDIS_URL!),
      prefix,
      log: silent,
      timeoutMs: 300,
      maxHeld,
    });
    const other = await RedisBus.connect({ url: REDIS_URL!, prefix, log: silent });
    buses.push(faulty, other);
    const seen: number[] = [];
    other.subscribe(topic, (e) => seen.push(n(e)));
    await other.whenSubscribed(topic);
    return { faulty, seen };
  }

  it('issues again, first and in order, the publishes the broken connection never acknowledged', async () => {
    const { faulty, seen } = await pair();
    await faulty.publish(event(1));
    await until(() => seen.includes(1));
    // Written to a connection that the reset has already cut, before the client notices.
    proxy.reset();
    const first = [2, 3, 4].map((k) => faulty.publish(event(k)));
    await until(() => faulty.commands.status !== 'ready');
    // Published while it reconnects: they wait behind the three.
    const later = [5, 6].map((k) => faulty.publish(event(k)));
    await Promise.all([...first, ...later]);
    await until(() => seen.includes(6));
    expect(seen.filter((k) => k > 1)).toEqual([2, 3, 4, 5, 6]);
  });

  it('refuses a publish past the held limit; the held ones keep their places', async () => {
    const { faulty, seen } = await pair(3);
    await proxy.refuse();
    await until(() => faulty.commands.status !== 'ready');
    const outcomes = [1, 2, 3, 4, 5].map((k) =>
      faulty.publish(event(k)).then(
        () => 'published',
        () => 'refused',
      ),
    );
    // Refused at once (an outbox event keeps its row for a drainer), the others wait for Redis.
    expect(await outcomes[3]).toBe('refused');
    expect(await outcomes[4]).toBe('refused');
    expect(faulty.reachable()).toBe(false);
    await proxy.pass();
    expect(await Promise.all(outcomes)).toEqual([
      'published',
      'published',
      'published',
      'refused',
      'refused',
    ]);
    await until(() => seen.length === 3);
    expect(seen).toEqual([1, 2, 3]);
    await until(() => faulty.reachable());
  });

  it('hands a resync signal to the resync listeners after the events before it, never to handlers', async () => {
    const { faulty } = await pair();
    const seen: Array<number | string> = [];
    faulty.subscribe(topic, (e) => seen.push(n(e)));
    faulty.onResync((topics) => seen.push(`resync ${topics?.join(',')}`));
    await faulty.whenSubscribed(topic);
    await Promise.all([
      faulty.publish(event(1)),
      faulty.publish(event(2)),
      faulty.publishResync([topic, 'conversation:nobody-here']),
      faulty.publish(event(3)),
    ]);
    await until(() => seen.includes(3));
    expect(seen).toEqual([1, 2, `resync ${topic}`, 3]);
  });
});

describe.skipIf(!REDIS_URL || TEST_DB !== 'sqlite')('a server whose Redis path resets', () => {
  let proxy: FaultProxy;
  let t: RealtimeTestServer;

  beforeAll(async () => {
    const target = new URL(REDIS_URL!);
    proxy = await FaultProxy.start(target.hostname, Number(target.port || 6379));
    t = await startRealtime({
      env: {
        SVC_REDIS_URL: proxy.rewrite(REDIS_URL!),
        SVC_REDIS_PREFIX: redisTestPrefix(),
        SVC_REDIS_TIMEOUT_MS: '300',
      },
    });
  });

  afterAll(async () => {
    await proxy?.pass();
    await t?.stop();
    await proxy?.close();
  });

  it('ends live subscriptions so clients resubscribe and refetch, and keeps serving', async () => {
    const alice = await t.signUp();
    const space = await createWorkspace(t, alice, 'Resync');
    const client = modernClient(t.wsUrl, alice);
    const sub = new Collected(client, WORKSPACE_EVENTS, { id: space.id });
    for (let i = 0; i < 100; i++) {
      if ((await t.subscriptions()) === 1) break;
      await sleep(20);
    }
    expect(await t.subscriptions()).toBe(1);
    await proxy.refuse();
    // Requests that publish events keep answering while Redis is away.
    const started = Date.now();
    const res = await t.gql(
      'mutation($n: String!) { createWorkspace(input: { name: $n }) { id } }',
      { n: 'while Redis is away' },
      alice,
    );
    expect(res.errors).toBeUndefined();
    expect(Date.now() - started).toBeLessThan(5000);
    await proxy.pass();
    // The subscription ends from the server's side: the client knows to resubscribe.
    await until(() => sub.completed);
    expect(sub.error).toBeNull();
    await client.dispose();
  });
});
