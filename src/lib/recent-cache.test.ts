import { describe, expect, it } from 'vitest';

import { RecentCache } from './recent-cache.js';

describe('RecentCache', () => {
  it('keeps what was used lately and drops what was not used for two generations', () => {
    const cache = new RecentCache<string, number>(2);
    cache.set('a', 1);
    cache.set('b', 2);
    // The newer generation is full: 'c' starts a new one, 'a' and 'b' are the older.
    cache.set('c', 3);
    expect(cache.get('a')).toBe(1); // found in the older: moves to the newer (now c, a)
    cache.set('d', 4); // the newer is full again: b is dropped with the older generation
    expect(cache.get('b')).toBeUndefined();
    expect(cache.get('a')).toBe(1);
    expect(cache.get('c')).toBe(3);
    expect(cache.get('d')).toBe(4);
  });

  it('makes a value once and returns the kept one after', () => {
    const cache = new RecentCache<string, string[]>(10);
    let made = 0;
    const make = (k: string) => {
      made += 1;
      return [k];
    };
    const first = cache.through('x', make);
    expect(cache.through('x', make)).toBe(first);
    expect(made).toBe(1);
  });
});
