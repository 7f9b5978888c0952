import { describe, expect, it } from 'vitest';

import { TokenBucketLimiter } from './token-bucket.js';

function limiter(opts: { perMinute: number; burst: number; maxKeys?: number }) {
  let t = 1_000_000;
  const l = new TokenBucketLimiter({ ...opts, now: () => t });
  return {
    l,
    advance: (ms: number) => {
      t += ms;
    },
  };
}

type Step = readonly [advanceMs: number, cost: number, expected: number | 'ok'];

describe('TokenBucketLimiter.take', () => {
  // `expected` is 'ok' or the retryAfterSeconds of a refusal.
  it.each<[string, { perMinute: number; burst: number }, readonly Step[]]>([
    [
      'burst then refusal',
      { perMinute: 60, burst: 3 },
      [
        [0, 1, 'ok'],
        [0, 1, 'ok'],
        [0, 1, 'ok'],
        [0, 1, 1],
      ],
    ],
    [
      'refills one token a second at 60/min',
      { perMinute: 60, burst: 2 },
      [
        [0, 2, 'ok'],
        [999, 1, 1],
        [1, 1, 'ok'],
        [0, 1, 1],
      ],
    ],
    [
      'slow rate rounds the wait up',
      { perMinute: 7, burst: 1 },
      [
        [0, 1, 'ok'],
        [0, 1, 9],
        [8_000, 1, 1],
        [571, 1, 1],
        [1, 1, 'ok'],
      ],
    ],
    [
      'exact wait passes',
      { perMinute: 3, burst: 1 },
      [
        [0, 1, 'ok'],
        [0, 1, 20],
        [20_000, 1, 'ok'],
      ],
    ],
    [
      'never more than the burst after a long idle',
      { perMinute: 60, burst: 2 },
      [
        [3_600_000, 1, 'ok'],
        [0, 1, 'ok'],
        [0, 1, 1],
      ],
    ],
    [
      'a refusal spends nothing',
      { perMinute: 60, burst: 5 },
      [
        [0, 4, 'ok'],
        [0, 3, 2],
        [0, 1, 'ok'],
        [0, 1, 1],
      ],
    ],
    [
      'cost counts several tokens',
      { perMinute: 120, burst: 10 },
      [
        [0, 10, 'ok'],
        [0, 5, 3],
        [2_500, 5, 'ok'],
      ],
    ],
    [
      'cost above burst never passes, answered with the time to full',
      { perMinute: 60, burst: 5 },
      [
        [0, 6, 1],
        [0, 5, 'ok'],
        [0, 6, 5],
        [5_000, 6, 1],
        [60_000, 6, 1],
      ],
    ],
    [
      'zero cost passes on an empty bucket',
      { perMinute: 60, burst: 1 },
      [
        [0, 1, 'ok'],
        [0, 0, 'ok'],
        [0, 1, 1],
      ],
    ],
    [
      'a clock stepping back refills nothing',
      { perMinute: 60, burst: 1 },
      [
        [0, 1, 'ok'],
        [-10_000, 1, 1],
        [10_000, 1, 1],
        [1_000, 1, 'ok'],
      ],
    ],
  ])('%s', (_name, opts, steps) => {
    const { l, advance } = limiter(opts);
    steps.forEach(([ms, cost, expected], i) => {
      advance(ms);
      const want = expected === 'ok' ? { ok: true } : { ok: false, retryAfterSeconds: expected };
      expect(l.take('k', cost), `step ${i}`).toEqual(want);
    });
  });

  it('keeps keys apart', () => {
    const { l } = limiter({ perMinute: 60, burst: 1 });
    expect(l.take('a').ok).toBe(true);
    expect(l.take('a').ok).toBe(false);
    expect(l.take('b').ok).toBe(true);
  });

  it.each([
    [{ perMinute: 0, burst: 1 }],
    [{ perMinute: -1, burst: 1 }],
    [{ perMinute: Number.NaN, burst: 1 }],
    [{ perMinute: 60, burst: 0 }],
    [{ perMinute: 60, burst: Number.POSITIVE_INFINITY }],
    [{ perMinute: 60, burst: 1, maxKeys: 0 }],
    [{ perMinute: 60, burst: 1, maxKeys: 1.5 }],
  ])('refuses options %j', (opts) => {
    expect(() => new TokenBucketLimiter(opts)).toThrow(RangeError);
  });

  it.each([-1, Number.NaN, Number.POSITIVE_INFINITY])('refuses cost %s', (cost) => {
    const { l } = limiter({ perMinute: 60, burst: 1 });
    expect(() => l.take('k', cost)).toThrow(RangeError);
  });
});

describe('TokenBucketLimiter memory', () => {
  it('stores nothing for a key that has not spent', () => {
    const { l } = limiter({ perMinute: 60, burst: 2 });
    l.take('k', 0);
    l.take('x', 3);
    expect(l.size).toBe(0);
  });

  it('drops buckets once they would have refilled', () => {
    const { l, advance } = limiter({ perMinute: 60, burst: 10 });
    for (let i = 0; i < 100; i++) l.take(`k${i}`);
    expect(l.size).toBe(100);
    advance(9_999);
    l.take('fresh');
    expect(l.size).toBe(101);
    advance(1);
    l.take('fresh');
    expect(l.size).toBe(1);
  });

  it('keeps a recently used bucket past older idle ones', () => {
    const { l, advance } = limiter({ perMinute: 60, burst: 2 });
    l.take('old');
    l.take('busy');
    advance(1_500);
    l.take('busy');
    advance(500);
    l.take('other');
    // `old` has refilled and is gone; `busy` was touched later and still holds its state.
    expect(l.size).toBe(2);
    expect(l.take('busy')).toEqual({ ok: true });
    expect(l.take('busy')).toEqual({ ok: false, retryAfterSeconds: 1 });
  });

  it('evicts the least recently used key past maxKeys', () => {
    const { l } = limiter({ perMinute: 60, burst: 1, maxKeys: 3 });
    for (const k of ['a', 'b', 'c']) l.take(k);
    expect(l.take('a').ok).toBe(false);
    expect(l.take('d').ok).toBe(true);
    expect(l.size).toBe(3);
    // `a` was the oldest stored (a refused take does not touch it) and starts again full.
    expect(l.take('a').ok).toBe(true);
    expect(l.take('c').ok).toBe(false);
    expect(l.take('d').ok).toBe(false);
  });

  it('reset forgets one key or all', () => {
    const { l } = limiter({ perMinute: 60, burst: 1 });
    l.take('a');
    l.take('b');
    l.reset('a');
    expect(l.take('a').ok).toBe(true);
    expect(l.take('b').ok).toBe(false);
    l.reset();
    expect(l.size).toBe(0);
    expect(l.take('b').ok).toBe(true);
  });

  it('uses a monotonic clock by default', () => {
    const l = new TokenBucketLimiter({ perMinute: 60, burst: 1 });
    expect(l.take('k').ok).toBe(true);
    expect(l.take('k')).toEqual({ ok: false, retryAfterSeconds: 1 });
  });
});
