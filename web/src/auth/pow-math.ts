import { sha256 } from '@noble/hashes/sha2.js';

/** Zero bits at the start of a hash, counting from the most significant bit of the first byte. */
export function leadingZeroBits(hash: Uint8Array): number {
  let n = 0;
  for (const byte of hash) {
    if (byte === 0) {
      n += 8;
      continue;
    }
    return n + Math.clz32(byte) - 24;
  }
  return n;
}

/**
 * The registration proof of work (docs/accounts.md): the first decimal counter whose
 * SHA-256(UTF-8 salt || UTF-8 counter) starts with `bits` zero bits. `progress` hears every
 * 50,000 tries.
 */
export function solvePow(salt: string, bits: number, progress?: (tried: number) => void): string {
  const enc = new TextEncoder();
  const prefix = enc.encode(salt);
  const buf = new Uint8Array(prefix.length + 20);
  buf.set(prefix);
  for (let i = 0; ; i++) {
    const n = enc.encodeInto(String(i), buf.subarray(prefix.length)).written;
    if (leadingZeroBits(sha256(buf.subarray(0, prefix.length + n))) >= bits) return String(i);
    if (progress && i % 50_000 === 0) progress(i);
  }
}
