import { describe, expect, it } from 'vitest';

import { RequestLoad } from './request-load.js';

const WINDOW = 50;

/** Keeps the event loop busy, as a request being served does. */
function spin(ms: number, during: () => void = () => {}): void {
  const until = performance.now() + ms;
  while (performance.now() < until) during();
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('RequestLoad.share', () => {
  it('is the busy share of the last window while requests arrive', async () => {
    const load = new RequestLoad(WINDOW);
    await pause(1);
    spin(WINDOW * 1.5, () => load.arrived());
    expect(load.share()).toBeGreaterThan(0.9);
  });

  it('is low while requests arrive but leave the loop idle', async () => {
    const load = new RequestLoad(WINDOW);
    for (let i = 0; i < 4; i++) {
      load.arrived();
      await pause(WINDOW / 2);
    }
    load.arrived();
    expect(load.share()).toBeLessThan(0.5);
  });

  it('is 0 when no request arrived within the window, however busy the loop', async () => {
    const load = new RequestLoad(WINDOW);
    await pause(1);
    spin(WINDOW * 1.5);
    expect(load.share()).toBe(0);
    load.arrived();
    spin(WINDOW * 1.5);
    expect(load.share()).toBe(0);
  });

  it('sees a burst within a tenth of a window, after a quiet spell', async () => {
    const load = new RequestLoad(WINDOW);
    load.arrived();
    await pause(WINDOW * 3);
    expect(load.share()).toBeLessThan(0.5);
    spin(WINDOW / 5, () => load.arrived());
    expect(load.share()).toBeGreaterThan(0.9);
  });
});
