import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { buildFuzzWorld } from './_fuzz-world.js';
import { fuzzAll, FUZZ_TARGETS } from './fuzz-targets.js';

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
    expect(runs).toEqual(Object.fromEntries(FUZZ_TARGETS.map((t) => [t.name, RUNS])));
  }, 60_000);
});
