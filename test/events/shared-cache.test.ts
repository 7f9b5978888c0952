import pino from 'pino';
import { afterAll, describe, expect, it } from 'vitest';

import type { Tx } from '../../src/db/transaction.js';
import { MemoryBus } from '../../src/events/memory-bus.js';
import { RedisBus } from '../../src/events/redis-bus.js';
import { SharedCache } from '../../src/events/shared-cache.js';
import { TEST_DB } from '../_util/app.js';
import { FaultProxy, sleep } from '../_util/fault-proxy.js';
import { redisTestPrefix } from '../_util/redis.js';

// src/events/shared-cache.ts: per-process caches of rarely changing reads, emptied on every
// process by an invalidation over the bus. It does not depend on the database: run once, in the
// SQLite project.
const REDIS_URL = process.env.SVC_TEST_REDIS_URL;
const silent = pino({ level: 'silent' });

async function until(check: () => boolean, ms = 8000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await sleep(20);
  }
}

/** A loader that counts its calls and answers the current `value`. */
function source(initial: string) {
  const s = {
    value: initial,
    loads: 0,
    load: async () => {
      s.loads++;
      return s.value;
    },
  };
  return s;
}

/** Just enough of a transaction to commit its `onCommit` callbacks. */
function fakeTx() {
  const after: Array<() => unknown> = [];
  const tx = { onCommit: (fn: () => unknown) => void after.push(fn) } as unknown as Tx;
  return { tx, commit: async () => Promise.all(after.map((fn) => fn())) };
}

describe.skipIf(TEST_DB !== 'sqlite')('shared cache on one process', () => {
  it('loads once, and again after an invalidation committed, not before', async () => {
    const cache = new SharedCache<string>(new MemoryBus(), { name: 'one', max: 10 });
    const s = source('a');
    expect(await cache.get('k', s.load)).toBe('a');
    expect(await cache.get('k', s.load)).toBe('a');
    expect(s.loads).toBe(1);
    s.value = 'b';
    const { tx, commit } = fakeTx();
    cache.invalidateOnCommit(tx, 'k');
    // Not committed yet: the old value still stands (the change is not visible either).
    expect(await cache.get('k', s.load)).toBe('a');
    await commit();
    expect(await cache.get('k', s.load)).toBe('b');
    expect(s.loads).toBe(2);
  });

  it('does not keep a load that raced an invalidation', async () => {
    const cache = new SharedCache<string>(new MemoryBus(), { name: 'race', max: 10 });
    let release: (v: string) => void = () => {};
    const slow = cache.get('k', () => new Promise<string>((r) => (release = r)));
    cache.invalidate('k');
    release('read before the change');
    expect(await slow).toBe('read before the change');
    const s = source('after the change');
    expect(await cache.get('k', s.load)).toBe('after the change');
    expect(s.loads).toBe(1);
  });

  it('drops every key at once, keeps at most `max`, and expires entries after ttlMs', async () => {
    let now = 1_000;
    const cache = new SharedCache<string>(new MemoryBus(), {
      name: 'ttl',
      max: 2,
      ttlMs: 500,
      now: () => now,
    });
    const s = source('v');
    await cache.get('a', s.load);
    await cache.get('b', s.load);
    await cache.get('c', s.load); // 'a' goes
    expect(s.loads).toBe(3);
    await cache.get('b', s.load);
    await cache.get('a', s.load);
    expect(s.loads).toBe(4);
    now += 501;
    await cache.get('a', s.load);
    expect(s.loads).toBe(5);
    cache.invalidate();
    await cache.get('a', s.load);
    expect(s.loads).toBe(6);
  });
});

describe.skipIf(!REDIS_URL || TEST_DB !== 'sqlite')('shared cache across processes (Redis)', () => {
  const prefix = redisTestPrefix();
  const buses: RedisBus[] = [];
  let proxy: FaultProxy | null = null;
  afterAll(async () => {
    await Promise.all(buses.map((b) => b.close()));
    await proxy?.close();
  });
  const open = async (url: string) => {
    const bus = await RedisBus.connect({ url, prefix, log: silent, timeoutMs: 300 });
    buses.push(bus);
    return bus;
  };

  it("drops another process's entry when this one invalidates it", async () => {
    const [a, b] = [await open(REDIS_URL!), await open(REDIS_URL!)];
    const onA = new SharedCache<string>(a, { name: 'pipes', max: 10 });
    const onB = new SharedCache<string>(b, { name: 'pipes', max: 10 });
    await Promise.all([a.whenSubscribed('cache:pipes'), b.whenSubscribed('cache:pipes')]);
    const s = source('old');
    expect(await onB.get('w1', s.load)).toBe('old');
    expect(await onB.get('w2', s.load)).toBe('old');
    s.value = 'new';
    onA.invalidate('w1');
    // The invalidation reaches B over Redis within milliseconds.
    const deadline = Date.now() + 8000;
    while ((await onB.get('w1', s.load)) !== 'new') {
      if (Date.now() > deadline)
        throw new Error('the invalidation never reached the other process');
      await sleep(10);
    }
    // Only the key invalidated: the other is still served from the cache.
    const loads = s.loads;
    expect(await onB.get('w2', s.load)).toBe('old');
    expect(s.loads).toBe(loads);
  });

  it('empties itself when its Redis subscriber connection comes back (missed invalidations)', async () => {
    const target = new URL(REDIS_URL!);
    proxy = await FaultProxy.start(target.hostname, Number(target.port || 6379));
    const bus = await open(proxy.rewrite(REDIS_URL!));
    let resyncs = 0;
    bus.onResync(() => resyncs++);
    const cache = new SharedCache<string>(bus, { name: 'resync', max: 10 });
    const s = source('before');
    await cache.get('k', s.load);
    s.value = 'after';
    proxy.reset();
    await until(() => resyncs > 0);
    expect(await cache.get('k', s.load)).toBe('after');
  });
});
