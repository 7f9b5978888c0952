import { generateKeyPairSync, sign, type KeyObject } from 'node:crypto';

import { describe, expect, it } from 'vitest';

import { KEY_OBJECTS_KEPT, keyObject, keyObjectsKept, verifyStatement } from './device-keys.js';

/** A public key's raw 32 bytes from its SPKI form (a JWK export can deadlock on Node.js 20). */
const rawEd25519Public = (key: KeyObject): string =>
  key.export({ type: 'spki', format: 'der' }).subarray(-32).toString('base64url');

function deviceKey() {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const x = rawEd25519Public(publicKey);
  return { x, sign: (text: string) => sign(null, Buffer.from(text, 'utf8'), privateKey) };
}

describe('verifyStatement', () => {
  it('accepts the key’s signature of the statement and nothing else, with the key kept or not', () => {
    const a = deviceKey();
    const b = deviceKey();
    const signature = a.sign('statement');
    for (let round = 0; round < 2; round += 1) {
      expect(verifyStatement(a.x, 'statement', signature)).toBe(true);
      expect(verifyStatement(a.x, 'statement!', signature)).toBe(false);
      expect(verifyStatement(b.x, 'statement', signature)).toBe(false);
      expect(verifyStatement(a.x, 'statement', b.sign('statement'))).toBe(false);
    }
  });

  it('answers false for a key that is not an Ed25519 public key, and does not keep it', () => {
    const kept = keyObjectsKept();
    expect(verifyStatement('not a key', 'statement', Buffer.alloc(64))).toBe(false);
    expect(keyObjectsKept()).toBe(kept);
  });
});

describe('keyObject', () => {
  it('keeps the keys used last, at most KEY_OBJECTS_KEPT of them', () => {
    const first = deviceKey().x;
    const used = deviceKey().x;
    const kept = keyObject(first);
    expect(keyObject(first)).toBe(kept);
    const usedObject = keyObject(used);
    // Fill the map with other keys, using `used` again halfway so it stays among the newest.
    for (let i = 0; i < KEY_OBJECTS_KEPT; i += 1) {
      keyObject(deviceKey().x);
      if (i === KEY_OBJECTS_KEPT / 2) expect(keyObject(used)).toBe(usedObject);
    }
    expect(keyObjectsKept()).toBe(KEY_OBJECTS_KEPT);
    expect(keyObject(used)).toBe(usedObject);
    // `first` was the oldest: converted again, into a new object that works as well.
    const again = keyObject(first);
    expect(again).not.toBe(kept);
    expect(rawEd25519Public(again)).toBe(first);
    expect(keyObjectsKept()).toBe(KEY_OBJECTS_KEPT);
  });
});
