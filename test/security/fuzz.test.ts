import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { buildFuzzWorld } from './_fuzz-world.js';
import { fuzz, fuzzAll, FUZZ_TARGETS, MEMORY_BOUNDS } from './fuzz-targets.js';

// Issue 48, item 6: each parser that takes outside input gets generated input for a moment
// (40 inputs per parser here, a few seconds in all; `npm run fuzz -- <seconds>` for longer runs). A finding
// fails with the input fast-check shrank it to and the seed to replay it.

const RUNS = 40;

describe('fuzzing the parsers that take outside input', () => {
  let w: Awaited<ReturnType<typeof buildFuzzWorld>>;
  beforeAll(async () => {
    w = await buildFuzzWorld();
  });
  afterAll(async () => w?.close());

  it('answers no 5xx, no INTERNAL, and throws nothing but the parsers’ refusals', async () => {
    const runs = await fuzzAll(w, { runs: RUNS });
    // Every parser got its inputs (a target that never ran would pass on nothing).
    expect(Object.fromEntries(Object.entries(runs).map(([name, r]) => [name, r.runs]))).toEqual(
      Object.fromEntries(FUZZ_TARGETS.map((t) => [t.name, RUNS])),
    );
    // And stayed within its memory (fuzzAll throws past the bounds; each was measured).
    for (const r of Object.values(runs)) {
      expect(r.retainedMiB).toBeLessThanOrEqual(MEMORY_BOUNDS.retainedMiB);
      expect(r.peakMiB).toBeLessThanOrEqual(MEMORY_BOUNDS.peakMiB);
    }
  }, 60_000);

  it('fails a parser that keeps what it was fed past the bound', async () => {
    const kept: number[][] = [];
    const leaking = fuzz({
      name: 'a parser that keeps 1 MiB of every input',
      input: fc.integer(),
      check: () => {
        // On V8's heap (a buffer's, or a long string's, bytes are outside it): 131,072 doubles.
        kept.push(new Array<number>(131_072).fill(0.5));
      },
    });
    await expect(
      fuzzAll(w, { runs: MEMORY_BOUNDS.retainedMiB + 16 }, 1, [leaking]),
    ).rejects.toThrow(/keeps 1 MiB of every input kept \d+/);
    expect(kept.length).toBe(MEMORY_BOUNDS.retainedMiB + 16);
  }, 60_000);
});
