import { createHash, createPublicKey, verify, type KeyObject } from 'node:crypto';

import { AppError, validation } from '../errors.js';
import { Lru } from '../lib/lru.js';

// Signed key statements (docs/keys.md). A client proves it holds an Ed25519 key by signing a
// short canonical UTF-8 text the server rebuilds from the request; the server never parses a
// signed text it was sent, so no two readings of one statement exist.

export const STATEMENT_HEADER = 'svc-key-statement-v1';

/** What a statement is for; a signature for one audience is worthless for another. */
export type StatementAudience =
  'login' | 'signup' | 'device-link' | 'enroll-identity' | 'rotate-identity';

/** Largest difference accepted between a statement's `issued-at` and the server's clock. */
export const MAX_CLOCK_SKEW_MS = 5 * 60_000;

/** Raw Ed25519 public keys are 32 bytes; signatures 64. */
const PUBLIC_KEY_BYTES = 32;
const SIGNATURE_BYTES = 64;

const RFC3339_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,3})?Z$/;

/** The statement lines after the header, in this order. */
export interface StatementFields {
  audience: StatementAudience;
  /** The server's signing key (raw, base64url), as in the discovery document. */
  server: string;
  nonce: string;
  /** Exactly as the client wrote it (RFC 3339, UTC). */
  issuedAt: string;
  /** Audience-specific `label: value` lines, in the order docs/keys.md gives. */
  extra: ReadonlyArray<readonly [string, string]>;
}

/** The exact bytes a client signs: lines joined by `\n`, no trailing newline. */
export function buildStatement(f: StatementFields): string {
  const lines = [
    STATEMENT_HEADER,
    `audience: ${f.audience}`,
    `server: ${f.server}`,
    `nonce: ${f.nonce}`,
    `issued-at: ${f.issuedAt}`,
    ...f.extra.map(([label, value]) => `${label}: ${value}`),
  ];
  return lines.join('\n');
}

function decodeExact(value: unknown, field: string, bytes: number, what: string): Buffer {
  if (typeof value !== 'string' || value.length > 200) {
    throw validation(`${field} must be ${what}: ${bytes} bytes as unpadded base64url`);
  }
  const trimmed = value.trim();
  const buf = /^[A-Za-z0-9_-]+$/.test(trimmed) ? Buffer.from(trimmed, 'base64url') : null;
  // Re-encoding refuses padding, stray characters and non-canonical trailing bits.
  if (!buf || buf.length !== bytes || buf.toString('base64url') !== trimmed) {
    throw validation(`${field} must be ${what}: ${bytes} bytes as unpadded base64url`);
  }
  return buf;
}

/** Checks a raw Ed25519 public key (32 bytes, base64url) and returns its canonical text. */
export function parsePublicKey(value: unknown, field: string): string {
  const raw = decodeExact(value, field, PUBLIC_KEY_BYTES, 'an Ed25519 public key');
  try {
    createPublicKey({
      key: { kty: 'OKP', crv: 'Ed25519', x: raw.toString('base64url') },
      format: 'jwk',
    });
  } catch {
    throw validation(`${field} is not a usable Ed25519 public key`);
  }
  return raw.toString('base64url');
}

/** Checks an Ed25519 signature (64 bytes, base64url). */
export function parseSignature(value: unknown, field: string): Buffer {
  return decodeExact(value, field, SIGNATURE_BYTES, 'an Ed25519 signature');
}

/**
 * Checks the format of a statement's `issued-at` (VALIDATION) and that it is within
 * MAX_CLOCK_SKEW_MS of `now` (UNAUTHENTICATED). Returns the text unchanged.
 */
export function checkIssuedAt(value: unknown, now: number): string {
  if (typeof value !== 'string' || !RFC3339_UTC.test(value)) {
    throw validation('issuedAt must be an RFC 3339 time in UTC, such as 2026-01-31T12:00:00.000Z');
  }
  const at = Date.parse(value);
  if (Number.isNaN(at)) throw validation('issuedAt is not a valid time');
  if (Math.abs(at - now) > MAX_CLOCK_SKEW_MS) {
    throw new AppError(
      'UNAUTHENTICATED',
      'the statement was issued more than 5 minutes away from the server clock; check the device clock',
    );
  }
  return value;
}

/** How many device keys' key objects `keyObject` keeps (a few hundred bytes each). */
export const KEY_OBJECTS_KEPT = 4096;

const keyObjects = new Lru<string, KeyObject>(KEY_OBJECTS_KEPT);

/**
 * OpenSSL's key object of a raw Ed25519 public key (base64url), kept for the keys used last: a
 * sign-in then spares the key's conversion from JWK (about a tenth of its signature check). A key
 * that cannot be converted is not kept and throws.
 */
export function keyObject(publicKey: string): KeyObject {
  let key = keyObjects.get(publicKey);
  if (!key) {
    key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: publicKey }, format: 'jwk' });
    keyObjects.set(publicKey, key);
  }
  return key;
}

/** How many key objects `keyObject` keeps now; for its tests. */
export function keyObjectsKept(): number {
  return keyObjects.size;
}

/** Whether `signature` is an Ed25519 signature of `statement` (UTF-8) by `publicKey`. */
export function verifyStatement(publicKey: string, statement: string, signature: Buffer): boolean {
  try {
    return verify(null, Buffer.from(statement, 'utf8'), keyObject(publicKey), signature);
  } catch {
    return false;
  }
}

/** The id of a key identity: `kid_` + base64url(SHA-256(raw public key)), first 22 characters. */
export function keyIdentityId(publicKey: string): string {
  const digest = createHash('sha256').update(Buffer.from(publicKey, 'base64url')).digest();
  return `kid_${digest.toString('base64url').slice(0, 22)}`;
}
