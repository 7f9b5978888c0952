import { describe, expect, it } from 'vitest';

import { ManualClock } from '../lib/clock.js';

import { ExpiryQueue, type Expiring } from './expiry-queue.js';

interface Item extends Expiring {
  name: string;
}

const item = (name: string, expiresAt: number): Item => ({ name, expiresAt, expiryIndex: -1 });

/** A queue on a manual clock that records what expires, and resolves once `count` have. */
function recorder(clock: ManualClock) {
  const expired: Item[] = [];
  let waiting: { count: number; resolve: () => void } | null = null;
  const queue = new ExpiryQueue<Item>(clock, (i) => {
    expired.push(i);
    if (waiting && expired.length >= waiting.count) waiting.resolve();
  });
  const until = (count: number) =>
    new Promise<void>((resolve) => {
      if (expired.length >= count) resolve();
      else waiting = { count, resolve };
    });
  return { queue, expired, until };
}

describe('ExpiryQueue', () => {
  it('expires every queued item in order of expiry, and none that was removed', async () => {
    const clock = new ManualClock(10_000);
    const { queue, expired, until } = recorder(clock);
    // A fixed shuffle with repeated expiries; every item is already due.
    const items = Array.from({ length: 300 }, (_, i) => item(`i${i}`, (i * 7919) % 997));
    for (const i of items) queue.add(i);
    const removed = items.filter((_, i) => i % 3 === 1);
    for (const i of removed) queue.remove(i);
    expect(queue.size).toBe(200);
    await until(200);
    expect(expired.map((i) => i.expiresAt)).toEqual(
      items
        .filter((i) => !removed.includes(i))
        .map((i) => i.expiresAt)
        .sort((a, b) => a - b),
    );
    expect(new Set(expired).size).toBe(200);
    expect(queue.size).toBe(0);
    expect(items.every((i) => i.expiryIndex === -1)).toBe(true);
  });

  it('keeps an item the clock has not reached, and expires it once the clock has', async () => {
    const clock = new ManualClock(1_000);
    const { queue, expired, until } = recorder(clock);
    const later = item('later', 5_000);
    queue.add(later);
    queue.add(item('due', 1_000));
    await until(1);
    expect(expired.map((i) => i.name)).toEqual(['due']);
    expect(queue.size).toBe(1);
    clock.set(6_000);
    // The next firing (here for an earlier item, added already due) takes every item due by then.
    queue.add(item('earlier', 4_000));
    await until(3);
    expect(expired.map((i) => i.name)).toEqual(['due', 'earlier', 'later']);
  });

  it('forgets a removed item and ignores a second add or remove', async () => {
    const clock = new ManualClock(0);
    const { queue, expired, until } = recorder(clock);
    const a = item('a', 0);
    const b = item('b', 0);
    queue.add(a);
    queue.add(a);
    queue.add(b);
    queue.remove(a);
    queue.remove(a);
    expect(queue.size).toBe(1);
    await until(1);
    expect(expired).toEqual([b]);
  });
});
