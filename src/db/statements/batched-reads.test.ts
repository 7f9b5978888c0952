import { describe, expect, it } from 'vitest';

import { BatchedReads } from './batched-reads.js';

/** A read that records each batch it was given and answers when told. */
function recordingRead() {
  const batches: string[][] = [];
  const answers: Array<() => void> = [];
  const read = (keys: string[]) => {
    batches.push([...keys]);
    return new Promise<Map<string, string>>((resolve) => {
      answers.push(() =>
        resolve(new Map(keys.filter((k) => k !== 'none').map((k) => [k, `row ${k}`]))),
      );
    });
  };
  return { batches, answers, read };
}

const turn = () => new Promise((r) => setImmediate(r));

describe('BatchedReads', () => {
  it('answers the lookups of one turn with one read, each its own row', async () => {
    const r = recordingRead();
    const reads = new BatchedReads(r.read, (k) => k);
    const a = reads.get('a');
    const b = reads.get('b');
    const none = reads.get('none');
    expect(r.batches).toEqual([]);
    await turn();
    expect(r.batches).toEqual([['a', 'b', 'none']]);
    r.answers[0]!();
    expect(await Promise.all([a, b, none])).toEqual(['row a', 'row b', undefined]);
  });

  it('reads a key asked twice in one turn once, and answers both', async () => {
    const r = recordingRead();
    const reads = new BatchedReads(r.read, (k) => k);
    const first = reads.get('a');
    const second = reads.get('a');
    await turn();
    expect(r.batches).toEqual([['a']]);
    r.answers[0]!();
    expect(await Promise.all([first, second])).toEqual(['row a', 'row a']);
  });

  it('never answers a lookup from a read sent before it was asked', async () => {
    const r = recordingRead();
    const reads = new BatchedReads(r.read, (k) => k, { maxInFlight: 2 });
    const early = reads.get('a');
    await turn();
    // The read of `a` is out; `a` asked again joins a new batch, read after the question.
    const late = reads.get('a');
    await turn();
    expect(r.batches).toEqual([['a'], ['a']]);
    r.answers[0]!();
    expect(await early).toBe('row a');
    let lateSettled = false;
    void late.then(() => (lateSettled = true));
    await turn();
    expect(lateSettled).toBe(false);
    r.answers[1]!();
    expect(await late).toBe('row a');
  });

  it('gathers while every slot is out and sends the gathered keys when one answers', async () => {
    const r = recordingRead();
    const reads = new BatchedReads(r.read, (k) => k, { maxInFlight: 1 });
    const a = reads.get('a');
    await turn();
    const rest = ['b', 'c', 'd'].map((k) => reads.get(k));
    await turn();
    await turn();
    expect(r.batches).toEqual([['a']]);
    expect(reads.pending()).toBe(1);
    r.answers[0]!();
    await a;
    await turn();
    expect(r.batches).toEqual([['a'], ['b', 'c', 'd']]);
    r.answers[1]!();
    expect(await Promise.all(rest)).toEqual(['row b', 'row c', 'row d']);
    expect(reads.pending()).toBe(0);
  });

  it('sends at most maxBatch keys a read, the rest in the next', async () => {
    const r = recordingRead();
    const reads = new BatchedReads(r.read, (k) => k, { maxBatch: 2, maxInFlight: 1 });
    const all = ['a', 'b', 'c', 'd', 'e'].map((k) => reads.get(k));
    await turn();
    expect(r.batches).toEqual([['a', 'b']]);
    r.answers[0]!();
    await turn();
    expect(r.batches[1]).toEqual(['c', 'd']);
    r.answers[1]!();
    await turn();
    expect(r.batches[2]).toEqual(['e']);
    r.answers[2]!();
    expect(await Promise.all(all)).toEqual(['a', 'b', 'c', 'd', 'e'].map((k) => `row ${k}`));
  });

  it('fails every lookup of a batch whose read fails, and goes on with the next', async () => {
    let fail = true;
    const reads = new BatchedReads(
      async (keys: string[]) => {
        if (fail) throw new Error('connection reset');
        return new Map(keys.map((k) => [k, k.toUpperCase()]));
      },
      (k) => k,
    );
    const failed = [reads.get('a'), reads.get('b')];
    for (const f of failed) await expect(f).rejects.toThrow('connection reset');
    fail = false;
    expect(await reads.get('a')).toBe('A');
  });

  it('fails the batch when the read throws before it returns a promise', async () => {
    const reads = new BatchedReads<string, string>(
      () => {
        throw new Error('no statement');
      },
      (k) => k,
    );
    await expect(reads.get('a')).rejects.toThrow('no statement');
    expect(reads.pending()).toBe(0);
  });
});
