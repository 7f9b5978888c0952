// Solves a registration proof of work (docs/accounts.md) off the page's thread: the first decimal
// counter whose SHA-256(salt || counter) starts with `bits` zero bits.
import { sha256 } from '@noble/hashes/sha2.js';

import { leadingZeroBits } from './pow-math.ts';

interface Ask {
  salt: string;
  bits: number;
}

self.onmessage = (ev: MessageEvent<Ask>) => {
  const { salt, bits } = ev.data;
  const enc = new TextEncoder();
  const prefix = enc.encode(salt);
  const buf = new Uint8Array(prefix.length + 20);
  buf.set(prefix);
  for (let i = 0; ; i++) {
    const n = enc.encodeInto(String(i), buf.subarray(prefix.length)).written;
    if (leadingZeroBits(sha256(buf.subarray(0, prefix.length + n))) >= bits) {
      self.postMessage({ nonce: String(i), tries: i + 1 });
      return;
    }
    if (i % 50_000 === 0) self.postMessage({ progress: i });
  }
};
