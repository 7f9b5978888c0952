import { Worker } from 'node:worker_threads';

import { describe, expect, it } from 'vitest';

import { WorkerCalls } from '../../src/lib/worker-thread.js';

// Calls to a worker thread matched with their answers by id (src/lib/worker-thread.ts), as the
// search analysis (services/search/analyzer.ts) and `svc import`'s terms (data/import/terms.ts)
// use them: answers in any order, and calls still waiting when the thread ends settled here.

/** A thread that doubles numbers, answering the larger ones first, and exits on -1. */
function doubler(): Worker {
  return new Worker(
    `const { parentPort } = require('node:worker_threads');
     parentPort.on('message', ([id, n]) => {
       if (n === -1) process.exit(3);
       setTimeout(() => parentPort.postMessage([id, n * 2]), n > 5 ? 0 : 30);
     });`,
    { eval: true },
  );
}

describe('WorkerCalls', () => {
  it('matches each answer to its call, whatever the order they come back in', async () => {
    const calls = new WorkerCalls<number, number>(doubler(), () => {
      throw new Error('not expected');
    });
    const order: number[] = [];
    const answers = await Promise.all(
      [1, 10, 2, 20].map((n) => calls.call(n).then((a) => (order.push(n), a))),
    );
    expect(answers).toEqual([2, 20, 4, 40]);
    // The larger ones came back first: the matching is by id, not by order.
    expect(order.slice(0, 2).sort()).toEqual([10, 20]);
    await calls.end();
  });

  it('settles waiting and later calls through `lost` once the thread exits', async () => {
    const causes: string[] = [];
    const calls = new WorkerCalls<number, number>(doubler(), (n, cause) => {
      causes.push(String(cause));
      return -n;
    });
    // Answered after 30 ms: the exit comes first.
    const waiting = expect(calls.call(1)).resolves.toBe(-1);
    await expect(calls.call(-1)).resolves.toBe(1);
    await waiting;
    expect(calls.running).toBe(false);
    await expect(calls.call(7)).resolves.toBe(-7);
    expect(causes[0]).toContain('exit 3');
  });

  it('fails the calls when `lost` throws, and ends on request', async () => {
    const calls = new WorkerCalls<number, number>(doubler(), (_, cause) => {
      throw cause;
    });
    // Its rejection is awaited from the start: it comes while `end` waits for the thread.
    const waiting = expect(calls.call(2)).rejects.toThrow('ended');
    await calls.end();
    await waiting;
    await expect(calls.call(3)).rejects.toThrow('ended');
  });
});
