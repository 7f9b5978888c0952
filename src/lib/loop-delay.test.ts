import { afterEach, describe, expect, it } from 'vitest';

import { LoopDelay } from './loop-delay.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function block(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // The loop is busy: the sampling timer cannot fire.
  }
}

describe('LoopDelay', () => {
  let delay: LoopDelay | null = null;
  afterEach(() => delay?.close());

  // A coarse sampling interval, so that the interval and the delay are far apart whatever the
  // machine's load.
  const RESOLUTION_MS = 250;

  it('reads about zero on an idle loop, not the sampling interval', async () => {
    delay = new LoopDelay(RESOLUTION_MS);
    await sleep(RESOLUTION_MS * 4 + 50);
    const p99 = delay.take(99);
    expect(p99).toBeGreaterThanOrEqual(0);
    // Node's histogram alone reports the interval itself, 0.25 s, here.
    expect(p99).toBeLessThan(RESOLUTION_MS / 2 / 1000);
  });

  it('reads how long the loop was blocked, and starts over after each reading', async () => {
    delay = new LoopDelay(RESOLUTION_MS);
    await sleep(RESOLUTION_MS + 20);
    // The timer due during the block fires when it ends: late by the block less the part of
    // the interval that had passed when it began, so between 0.35 and 0.6 s.
    block(600);
    await sleep(RESOLUTION_MS * 2);
    const blocked = delay.take(99);
    expect(blocked).toBeGreaterThan(0.3);
    expect(blocked).toBeLessThan(0.65);
    await sleep(RESOLUTION_MS * 4 + 50);
    expect(delay.take(99)).toBeLessThan(RESOLUTION_MS / 2 / 1000);
  });
});
