import { validation } from '../errors.js';

/** A keyset position: a timestamp (ms) and an id that breaks ties. */
export interface CursorPosition {
  at: number;
  id: string;
}

/** Cursors are opaque to clients: base64url of `<ms>:<id>`. */
export function encodeCursor(pos: CursorPosition): string {
  return Buffer.from(`${pos.at}:${pos.id}`, 'utf8').toString('base64url');
}

/** Decodes a cursor; a forged or damaged one answers VALIDATION. */
export function decodeCursor(cursor: string): CursorPosition {
  const text = /^[A-Za-z0-9_-]{1,200}$/.test(cursor)
    ? Buffer.from(cursor, 'base64url').toString('utf8')
    : '';
  const m = /^(\d{1,16}):([0-9a-zA-Z-]{1,64})$/.exec(text);
  if (!m) throw validation('cursor is not one this server issued');
  return { at: Number(m[1]), id: m[2] as string };
}

/**
 * Cursors of lists keyed by something other than an id (a CIDR, a principal id): base64url of
 * `<ms>:<key>`, the key any printable ASCII up to 200 characters.
 */
export function encodeKeyCursor(pos: CursorPosition): string {
  return Buffer.from(`${pos.at}:${pos.id}`, 'utf8').toString('base64url');
}

/** Decodes `encodeKeyCursor`; a forged or damaged cursor answers VALIDATION. */
export function decodeKeyCursor(cursor: string): CursorPosition {
  const text = /^[A-Za-z0-9_-]{1,300}$/.test(cursor)
    ? Buffer.from(cursor, 'base64url').toString('utf8')
    : '';
  const m = /^(\d{1,16}):([\x21-\x7e]{1,200})$/.exec(text);
  if (!m) throw validation('cursor is not one this server issued');
  return { at: Number(m[1]), id: m[2] as string };
}
