import { randomBytes } from 'node:crypto';

import { v7 as uuidv7 } from 'uuid';

/** A new time-ordered id (UUIDv7), so ids sort by creation time. */
export function newId(): string {
  return uuidv7();
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Whether a string has the shape of an id we issue (lower-case UUID). */
export function isId(value: string): boolean {
  return UUID_RE.test(value);
}

/** A random secret token, base64url, of `bytes` bytes of entropy. */
export function randomToken(bytes = 32): string {
  return randomBytes(bytes).toString('base64url');
}
