import { generateKeyPairSync, sign, type KeyObject } from 'node:crypto';

import { describe, expect, it } from 'vitest';

import { rawEd25519Public } from '../services/instance/server-keys.js';

import { KeyLogError, payloadHash, verifyKeyLog, type Signed } from './key-log.js';

// A key log as docs/discovery.md describes it, built here by hand: entry 0 signed by its own
// key, each later one by the key before it, with `seq` and `prev` chaining them.
const newKey = () => generateKeyPairSync('ed25519');

function entry(seq: number, key: KeyObject, prev: string | null, signer: KeyObject): Signed {
  const payload = JSON.stringify({
    type: 'svc.key-log.v1',
    seq,
    alg: 'ed25519',
    key: rawEd25519Public(key),
    prev,
    createdAt: '2030-01-01T00:00:00.000Z',
  });
  return { payload, signature: sign(null, Buffer.from(payload), signer).toString('base64url') };
}

function chain(n: number) {
  const keys = Array.from({ length: n }, newKey);
  const log: Signed[] = [];
  for (const [i, k] of keys.entries()) {
    const prev = i === 0 ? null : payloadHash(log[i - 1]!.payload);
    log.push(entry(i, k.publicKey, prev, (keys[i - 1] ?? k).privateKey));
  }
  return { keys, log };
}

describe('verifyKeyLog', () => {
  it('answers the keys of a log whose every rotation the key before signed', () => {
    const { keys, log } = chain(3);
    expect(verifyKeyLog(log).keys).toEqual(keys.map((k) => rawEd25519Public(k.publicKey)));
  });

  it('refuses a rotation signed by the new key itself (a key replaced without the old one)', () => {
    const { log } = chain(2);
    const stranger = newKey();
    log.push(entry(2, stranger.publicKey, payloadHash(log[1]!.payload), stranger.privateKey));
    expect(() => verifyKeyLog(log)).toThrow(/entry 2 is not signed by the key before it/);
  });

  it('refuses an entry whose seq or prev does not continue the chain', () => {
    const { keys, log } = chain(2);
    const next = newKey();
    const wrongSeq = [
      ...log,
      entry(3, next.publicKey, payloadHash(log[1]!.payload), keys[1]!.privateKey),
    ];
    expect(() => verifyKeyLog(wrongSeq)).toThrow(/has seq 3/);
    const wrongPrev = [
      ...log,
      entry(2, next.publicKey, payloadHash(log[0]!.payload), keys[1]!.privateKey),
    ];
    expect(() => verifyKeyLog(wrongPrev)).toThrow(/names another prev/);
  });

  it('refuses an altered payload, a dropped entry and an empty or malformed log', () => {
    const { log } = chain(3);
    const altered = log.map((s, i) =>
      i === 1 ? { ...s, payload: s.payload.replace('2030', '2031') } : s,
    );
    expect(() => verifyKeyLog(altered)).toThrow(KeyLogError);
    expect(() => verifyKeyLog([log[0], log[2]])).toThrow(KeyLogError);
    expect(() => verifyKeyLog([])).toThrow(/empty/);
    expect(() => verifyKeyLog('log')).toThrow(KeyLogError);
    expect(() => verifyKeyLog([{ payload: '{', signature: 'x' }])).toThrow(/not JSON/);
  });
});
