import { describe, expect, it } from 'vitest';

import { Loader } from './loaders.js';

describe('Loader', () => {
  it('loads the keys asked for in one turn in one batch, each once', async () => {
    const batches: string[][] = [];
    const loader = new Loader<number>(async (keys) => {
      batches.push(keys);
      return new Map(keys.filter((k) => k !== 'gone').map((k) => [k, k.length]));
    });
    const answers = await Promise.all([loader.load('a'), loader.load('bb'), loader.load('a')]);
    expect(answers).toEqual([1, 2, 1]);
    expect(batches).toEqual([['a', 'bb']]);
  });

  it('knows the answers of a batch once it has settled, found or not', async () => {
    const loader = new Loader<number>(
      async (keys) => new Map(keys.filter((k) => k !== 'gone').map((k) => [k, k.length])),
    );
    expect(loader.known('abc')).toBe(false);
    const pending = loader.prime(['abc', 'gone']);
    // Asked, not yet answered.
    expect(loader.known('abc')).toBe(false);
    await pending;
    expect(loader.known('abc')).toBe(true);
    expect(loader.value('abc')).toBe(3);
    expect(loader.known('gone')).toBe(true);
    expect(loader.value('gone')).toBeUndefined();
    expect(loader.known('other')).toBe(false);
  });

  it('knows nothing of a batch that failed, and fails its loads', async () => {
    const loader = new Loader<number>(async () => {
      throw new Error('the store is down');
    });
    await expect(loader.prime(['a'])).rejects.toThrow('the store is down');
    expect(loader.known('a')).toBe(false);
  });
});
