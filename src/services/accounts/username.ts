import { validation } from '../../errors.js';

import { isCommonPassword } from './common-passwords.js';

export const USERNAME_MIN = 2;
export const USERNAME_MAX = 32;
/**
 * Longest raw input looked at. NFKC can grow a string many times over (one ligature becomes
 * several letters), so input is bounded before it is normalized.
 */
export const USERNAME_INPUT_MAX = 256;

/** The case-folded key a username is looked up by (sign-in, `findByUsername`). */
export function lookupKey(input: string): string {
  return input.slice(0, USERNAME_INPUT_MAX).normalize('NFKC').trim().toLowerCase();
}

/**
 * Names nobody may take: the tombstone prefix, words that read as staff, and the mention
 * keywords (`@here`, `@channel`, `@everyone`) so a mention can never be ambiguous.
 */
const RESERVED = new Set([
  'admin',
  'administrator',
  'root',
  'system',
  'svc',
  'operator',
  'moderator',
  'support',
  'here',
  'channel',
  'everyone',
  'me',
  'null',
  'undefined',
]);

/**
 * Checks and normalizes a username (docs/accounts.md): NFKC first, so full-width and other
 * compatibility forms fold into plain ones; then only ASCII letters, digits, `_`, `.` and `-`,
 * starting and ending with a letter or digit. Keeping to ASCII rules out look-alike letters from
 * other scripts (Cyrillic `а` for Latin `a`). Uniqueness ignores case (`usernameKey`).
 */
export function normalizeUsername(input: unknown): { username: string; key: string } {
  if (typeof input !== 'string') throw validation('username must be a string');
  if (input.length > USERNAME_INPUT_MAX) {
    throw validation(`username must be ${USERNAME_MIN} to ${USERNAME_MAX} characters long`);
  }
  const username = input.normalize('NFKC').trim();
  if (username.length < USERNAME_MIN || username.length > USERNAME_MAX) {
    throw validation(`username must be ${USERNAME_MIN} to ${USERNAME_MAX} characters long`);
  }
  if (!/^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?$/.test(username)) {
    throw validation(
      'username may use only letters a-z, digits, ".", "_" and "-", and must start and end with a letter or digit',
    );
  }
  if (/[._-]{2}/.test(username)) {
    throw validation('username may not have two of ".", "_" or "-" in a row');
  }
  const key = username.toLowerCase();
  if (RESERVED.has(key) || key.startsWith('deleted-')) {
    throw validation(`the username "${username}" is reserved`);
  }
  return { username, key };
}

export const PASSWORD_MIN = 8;
/** Bounds the hashing work an attacker can ask for. */
export const PASSWORD_MAX_BYTES = 1024;

/**
 * Checks a new password (docs/accounts.md): 8 characters to 1024 bytes, and not on the list of the
 * most common passwords (common-passwords.ts). Sign-in never applies this, so an account whose
 * password predates the list still signs in.
 */
export function checkPassword(password: unknown): string {
  if (typeof password !== 'string') throw validation('password must be a string');
  if ([...password].length < PASSWORD_MIN) {
    throw validation(`password must be at least ${PASSWORD_MIN} characters long`);
  }
  if (Buffer.byteLength(password, 'utf8') > PASSWORD_MAX_BYTES) {
    throw validation(`password must be at most ${PASSWORD_MAX_BYTES} bytes long`);
  }
  if (isCommonPassword(password)) {
    throw validation(
      'this password is one of the most common passwords and is among the first an attacker tries; choose another (a few unrelated words make a strong one)',
    );
  }
  return password;
}

/** Lower-cases and checks an email address; null when none is given. */
export function normalizeEmail(input: unknown): { email: string; key: string } | null {
  if (input === null || input === undefined || input === '') return null;
  if (typeof input !== 'string') throw validation('email must be a string');
  const email = input.trim();
  if (email.length > 254 || !/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email)) {
    throw validation('email must be an address such as name@example.org');
  }
  return { email, key: email.toLowerCase() };
}
