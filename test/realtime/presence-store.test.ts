import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import {
  MemoryPresenceStore,
  RedisPresenceStore,
  type PresenceStore,
} from '../../src/services/presence/presence-store.js';
import { redisTestPrefix } from '../_util/redis.js';

const REDIS_URL = process.env.SVC_TEST_REDIS_URL;
const prefix = redisTestPrefix;

// A connection's arrival: held by this process, active, and its status swapped, at once.
describe.each([
  ['memory', false],
  ['Redis', true],
] as const)('the %s presence store', (_name, usesRedis) => {
  let redis: Redis | null = null;
  let store: PresenceStore;
  let writes = 0;

  beforeAll(() => {
    if (!usesRedis) {
      store = new MemoryPresenceStore();
      return;
    }
    if (!REDIS_URL) return;
    redis = new Redis(REDIS_URL);
    store = new RedisPresenceStore(redis, prefix(), 'process-a', 60_000);
  });
  afterAll(() => {
    redis?.disconnect();
  });

  /** Counts the writes to Redis's socket `fn` makes: one per round trip. */
  const roundTrips = async <T>(fn: () => Promise<T>): Promise<T> => {
    writes = 0;
    if (!redis) return fn();
    await redis.ping();
    const socket = redis.stream;
    const write = socket.write;
    socket.write = function (this: typeof socket, ...args: Parameters<typeof write>) {
      writes++;
      return write.apply(this, args);
    } as typeof write;
    try {
      return await fn();
    } finally {
      socket.write = write;
    }
  };

  it.skipIf(usesRedis && !REDIS_URL)(
    'holds, records the activity and swaps the status in one round trip',
    async () => {
      const at = Date.now();
      expect(await roundTrips(() => store.arrive('u1', at, 'online'))).toBeNull();
      if (usesRedis) expect(writes).toBe(1);
      expect(await store.isConnected('u1')).toBe(true);
      expect(await store.lastActive('u1')).toBe(at);
      expect((await store.announced(['u1'])).get('u1')).toBe('online');

      // Arriving again (another process, or after the grace period) answers what was shown.
      expect(await store.arrive('u1', at + 1, 'away')).toBe('online');
      expect(await store.lastActive('u1')).toBe(at + 1);
      expect((await store.announced(['u1'])).get('u1')).toBe('away');

      // Released, nobody holds it; the status stays until it is swapped.
      await store.release('u1');
      expect(await store.isConnected('u1')).toBe(false);
      expect(await store.swapAnnounced('u1', 'offline')).toBe('away');
      expect((await store.announced(['u1'])).get('u1')).toBe('offline');
    },
  );

  it.runIf(usesRedis && REDIS_URL)(
    'finds as orphans the users shown that no process holds',
    async () => {
      await store.arrive('held', Date.now(), 'online');
      await store.arrive('gone', Date.now(), 'online');
      await store.release('gone');
      expect(await store.orphans(10, 1_000)).toEqual(['gone']);
    },
  );
});
