import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

import { validation } from '../../errors.js';

/**
 * Registration proof of work (docs/accounts.md, "Proof of work"). A challenge is stateless: its
 * id carries the salt, the bit count and the expiry under an HMAC of the server's cookie secret,
 * so asking for one writes nothing. Use is recorded when a signup spends it, which makes it
 * single-use.
 */

/** How long a challenge may be solved and spent. */
export const POW_CHALLENGE_TTL_MS = 30 * 60_000;
/** Nonce: 1 to 64 characters of this alphabet (a decimal counter is the usual choice). */
export const POW_NONCE_RE = /^[A-Za-z0-9._~-]{1,64}$/;

export interface PowChallenge {
  challengeId: string;
  salt: string;
  bits: number;
  expiresAt: number;
}

/** What a verified challenge tells the signup: the salt to record as used, and its expiry. */
export interface VerifiedPow {
  salt: string;
  expiresAt: number;
}

const VERSION = 'p1';

function mac(secret: Buffer, body: string): string {
  return createHmac('sha256', secret).update(`pow:${body}`).digest('base64url');
}

export function issuePowChallenge(secret: Buffer, bits: number, now: number): PowChallenge {
  const salt = randomBytes(16).toString('base64url');
  const expiresAt = now + POW_CHALLENGE_TTL_MS;
  const body = `${VERSION}.${bits}.${expiresAt}.${salt}`;
  return { challengeId: `${body}.${mac(secret, body)}`, salt, bits, expiresAt };
}

/** Number of leading zero bits of a byte string. */
export function leadingZeroBits(bytes: Uint8Array): number {
  let n = 0;
  for (const byte of bytes) {
    if (byte === 0) {
      n += 8;
      continue;
    }
    return n + Math.clz32(byte) - 24;
  }
  return n;
}

/** SHA-256 over the UTF-8 bytes of `salt` followed directly by those of `nonce`. */
export function powHash(salt: string, nonce: string): Buffer {
  return createHash('sha256').update(salt, 'utf8').update(nonce, 'utf8').digest();
}

/** Finds a nonce for a challenge; what a client does (tests and the reference client use it). */
export function solvePow(salt: string, bits: number): string {
  for (let i = 0; ; i++) {
    const nonce = i.toString(10);
    if (leadingZeroBits(powHash(salt, nonce)) >= bits) return nonce;
  }
}

/**
 * Checks a solution: the challenge must be one this server issued, unexpired, asking at least
 * `requiredBits` (so lowering is never accepted, raising the setting voids older challenges),
 * and the hash must have that many leading zero bits. Every refusal is VALIDATION with a message
 * saying which; replays are caught by the caller, which records the salt.
 */
export function verifyPow(
  secret: Buffer,
  input: { challengeId: unknown; nonce: unknown },
  requiredBits: number,
  now: number,
): VerifiedPow {
  const invalid = () =>
    validation('the proof-of-work challenge is not one this server issued, or was not solved');
  if (typeof input.challengeId !== 'string' || input.challengeId.length > 200) throw invalid();
  if (typeof input.nonce !== 'string' || !POW_NONCE_RE.test(input.nonce)) {
    throw validation('the proof-of-work nonce must be 1 to 64 characters of A-Z a-z 0-9 . _ ~ -');
  }
  const parts = input.challengeId.split('.');
  if (parts.length !== 5 || parts[0] !== VERSION) throw invalid();
  const [, bitsText, expText, salt, tag] = parts as [string, string, string, string, string];
  const body = `${VERSION}.${bitsText}.${expText}.${salt}`;
  const expected = Buffer.from(mac(secret, body));
  const given = Buffer.from(tag);
  if (expected.length !== given.length || !timingSafeEqual(expected, given)) throw invalid();
  const bits = Number(bitsText);
  const expiresAt = Number(expText);
  if (bits < requiredBits) throw invalid();
  if (expiresAt <= now) {
    throw validation('the proof-of-work challenge expired; ask for a new one');
  }
  if (leadingZeroBits(powHash(salt, input.nonce)) < bits) throw invalid();
  return { salt, expiresAt };
}
