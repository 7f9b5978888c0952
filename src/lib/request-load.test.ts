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

describe('RequestLoad.between', () => {
  const settledWithin = async (promise: Promise<void>, ms: number) =>
    Promise.race([promise.then(() => true), pause(ms).then(() => false)]);

  it('resolves at once when no request is being served', async () => {
    const load = new RequestLoad(WINDOW);
    expect(await settledWithin(load.between(60_000), 5)).toBe(true);
    const request = {};
    load.started(request);
    load.answered(request);
    expect(await settledWithin(load.between(60_000), 5)).toBe(true);
  });

  it('waits while requests are being served and resolves when the last is answered', async () => {
    const load = new RequestLoad(WINDOW);
    const [a, b] = [{}, {}];
    load.started(a);
    load.started(b);
    const waiting = load.between(60_000);
    load.answered(a);
    expect(await settledWithin(waiting, 30)).toBe(false);
    // Answering twice does not count for another request.
    load.answered(a);
    expect(await settledWithin(waiting, 30)).toBe(false);
    load.answered(b);
    expect(await settledWithin(waiting, 5)).toBe(true);
  });

  it('resolves after its longest wait when requests never stop', async () => {
    const load = new RequestLoad(WINDOW);
    load.started({});
    const waiting = load.between(20);
    expect(await settledWithin(waiting, 5)).toBe(false);
    expect(await settledWithin(waiting, 1000)).toBe(true);
  });

  it('is not held back by a request served for longer than its long-request time', async () => {
    const load = new RequestLoad(WINDOW, 300);
    load.started({});
    const start = performance.now();
    expect(await settledWithin(load.between(60_000), 5)).toBe(false);
    await pause(300 - (performance.now() - start) + 5);
    expect(await settledWithin(load.between(60_000), 5)).toBe(true);
  });

  it('tells whether a request arrived within the window', async () => {
    const load = new RequestLoad(WINDOW);
    expect(load.recent()).toBe(false);
    load.arrived();
    expect(load.recent()).toBe(true);
    await pause(WINDOW * 1.5);
    expect(load.recent()).toBe(false);
  });
});
