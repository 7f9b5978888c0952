import { generateKeyPairSync, sign, type KeyObject } from 'node:crypto';

import { rawEd25519Public } from '../../src/services/instance/server-keys.js';

// The keys and signed statements of docs/keys.md, without a server: for tests that drive a
// server in another process (test/deploy/compose-up.test.ts) as for those of _keys.ts.

export interface TestKey {
  /** Raw 32-byte public key, base64url. */
  publicKey: string;
  privateKey: KeyObject;
}

export function newKey(): TestKey {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  return { publicKey: rawEd25519Public(publicKey), privateKey };
}

export function signText(key: TestKey, text: string): string {
  return sign(null, Buffer.from(text, 'utf8'), key.privateKey).toString('base64url');
}

export function statement(
  audience: string,
  ch: { nonce: string; serverKey: string },
  issuedAt: string,
  extra: Array<[string, string]>,
): string {
  return [
    'svc-key-statement-v1',
    `audience: ${audience}`,
    `server: ${ch.serverKey}`,
    `nonce: ${ch.nonce}`,
    `issued-at: ${issuedAt}`,
    ...extra.map(([k, v]) => `${k}: ${v}`),
  ].join('\n');
}
