import type { Client } from 'graphql-ws';
import { Redis } from 'ioredis';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { BusEvent } from '../../src/events/bus.js';
import { RedisBus } from '../../src/events/redis-bus.js';
import { redisTestPrefix } from '../_util/redis.js';

import {
  Collected,
  createWorkspace,
  joinWorkspace,
  modernClient,
  sendMessage,
  startRealtime,
  until,
  WORKSPACE_EVENTS,
  type RealtimeTestServer,
} from './_helpers.js';

const REDIS_URL = process.env.SVC_TEST_REDIS_URL;
const prefix = redisTestPrefix;
const silent = pino({ level: 'silent' });

describe.skipIf(!REDIS_URL)('the Redis bus', () => {
  const buses: RedisBus[] = [];
  let admin: Redis;
  const open = async (p: string) => {
    const bus = await RedisBus.connect({ url: REDIS_URL!, prefix: p, log: silent });
    buses.push(bus);
    return bus;
  };
  const event = (topic: string, n: number): BusEvent => ({
    topic,
    type: 'MessageCreated',
    at: n,
    payload: { n },
  });
  const numsub = async (channel: string) =>
    Number(((await admin.pubsub('NUMSUB', channel)) as [string, number])[1]);

  beforeAll(() => {
    admin = new Redis(REDIS_URL!);
  });
  afterAll(async () => {
    for (const b of buses) await b.close();
    admin.disconnect();
  });

  it('delivers an event published on one process to every process once, in order', async () => {
    const p = prefix();
    const [a, b] = [await open(p), await open(p)];
    const onA: number[] = [];
    const onB: number[] = [];
    const onB2: number[] = [];
    a.subscribe('workspace:w', (e) => onA.push(e.payload.n as number));
    b.subscribe('workspace:w', (e) => onB.push(e.payload.n as number));
    b.subscribe('workspace:w', (e) => onB2.push(e.payload.n as number));
    await Promise.all([a.whenSubscribed('workspace:w'), b.whenSubscribed('workspace:w')]);
    const sent = Array.from({ length: 500 }, (_, n) => n);
    await Promise.all(sent.map((n) => a.publish(event('workspace:w', n))));
    await until(() => onA.length === 500 && onB.length === 500 && onB2.length === 500, 'delivery');
    expect(onA).toEqual(sent);
    expect(onB).toEqual(sent);
    expect(onB2).toEqual(sent);
  });

  it('keeps one Redis subscription per topic, released with the last listener', async () => {
    const p = prefix();
    const bus = await open(p);
    const first = bus.subscribe('user:u', () => {});
    const second = bus.subscribe('user:u', () => {});
    await bus.whenSubscribed('user:u');
    expect(await numsub(`${p}user:u`)).toBe(1);
    first();
    expect(bus.topicCount()).toBe(1);
    second();
    expect(bus.topicCount()).toBe(0);
    await until(async () => (await numsub(`${p}user:u`)) === 0, 'the unsubscribe');
  });

  it('keeps prefixes apart', async () => {
    const [a, b] = [await open(prefix()), await open(prefix())];
    const got: number[] = [];
    b.subscribe('workspace:x', (e) => got.push(e.payload.n as number));
    await b.whenSubscribed('workspace:x');
    await a.publish(event('workspace:x', 1));
    await b.publish(event('workspace:x', 2));
    await until(() => got.length === 1, 'the event');
    expect(got).toEqual([2]);
  });
});

describe.skipIf(!REDIS_URL)('a server on the Redis bus', () => {
  let t: RealtimeTestServer;
  let admin: Redis;
  const keys = prefix();
  const clients: Client[] = [];

  beforeAll(async () => {
    admin = new Redis(REDIS_URL!);
    t = await startRealtime({
      env: { SVC_REDIS_URL: REDIS_URL!, SVC_REDIS_PREFIX: keys },
      overrides: { presence: { sweepMs: 50, offlineGraceMs: 200 } },
    });
  });
  afterAll(async () => {
    for (const c of clients) await c.dispose();
    await t?.stop();
    admin?.disconnect();
  });

  it('delivers messages and presence through Redis', async () => {
    expect(t.server.ctx.bus).toBeInstanceOf(RedisBus);
    const alice = await t.signUp();
    const bob = await t.signUp();
    const space = await createWorkspace(t, alice, 'Redis');
    await joinWorkspace(t, alice, bob, space.id);
    const bobs = modernClient(t.wsUrl, bob);
    clients.push(bobs);
    const sub = new Collected(bobs, WORKSPACE_EVENTS, { id: space.id });
    await until(async () => (await t.subscriptions()) === 1, 'the subscription');
    const alices = modernClient(t.wsUrl, alice);
    clients.push(alices);
    await until(
      () =>
        sub
          .events('workspaceEvents')
          .some(
            (e) =>
              e.type === 'PresencesChanged' &&
              (e.payload.changes as Array<{ userId: string }>).some((c) => c.userId === alice.id),
          ),
      'alice online',
    );
    await sendMessage(t, alice, space.channels.general!, 'over redis');
    await until(
      () => JSON.stringify(sub.events('workspaceEvents')).includes('over redis'),
      'the message',
    );
    const presence = await t.gql(
      'query($u: [ID!]!) { presence(userIds: $u) { status } }',
      { u: [alice.id] },
      bob,
    );
    expect(presence.data?.presence[0].status).toBe('ONLINE');
  });

  it('announces offline the users of a process that died', async () => {
    const alice = await t.signUp();
    const bob = await t.signUp();
    const space = await createWorkspace(t, alice, 'Orphans');
    await joinWorkspace(t, alice, bob, space.id);
    const before = await t.subscriptions();
    const bobs = modernClient(t.wsUrl, bob);
    clients.push(bobs);
    const sub = new Collected(bobs, WORKSPACE_EVENTS, { id: space.id });
    await until(async () => (await t.subscriptions()) === before + 1, 'the subscription');
    // Alice was online through another process, which has gone: its hold has expired.
    await admin.zadd(`${keys}presence:conn:${alice.id}`, Date.now() - 1_000, 'dead-process');
    await admin.set(`${keys}presence:shown:${alice.id}`, 'online');
    await admin.zadd(`${keys}presence:visible`, Date.now(), alice.id);
    await until(
      () =>
        sub
          .events('workspaceEvents')
          .some(
            (e) =>
              e.type === 'PresencesChanged' &&
              (e.payload.changes as Array<{ userId: string; status: string }>).some(
                (c) => c.userId === alice.id && c.status === 'OFFLINE',
              ),
          ),
      'alice announced offline',
    );
    expect(await admin.zscore(`${keys}presence:visible`, alice.id)).toBeNull();
  });
});
