import fs from 'node:fs';
import { createRequire } from 'node:module';

/**
 * The most common passwords, from `@zxcvbn-ts/language-common` (docs/dependencies.md): about
 * 49,000 entries ranked from leaked password sets, lower-case. Read from the package on first
 * use (no network), kept as a set for the life of the process (about 2 MB).
 */
let common: Set<string> | null = null;

function commonPasswords(): Set<string> {
  if (common === null) {
    const require = createRequire(import.meta.url);
    const file = require.resolve('@zxcvbn-ts/language-common/src/passwords.json');
    const list: unknown = JSON.parse(fs.readFileSync(file, 'utf8'));
    if (!Array.isArray(list)) throw new Error(`${file} is not a list of passwords`);
    common = new Set(list.filter((p): p is string => typeof p === 'string'));
  }
  return common;
}

/**
 * Whether a password is on the list, ignoring case and compatibility forms ("PassWord1" and
 * "ｐａｓｓｗｏｒｄ1" count as "password1"), and ignoring spaces around it.
 */
export function isCommonPassword(password: string): boolean {
  return commonPasswords().has(password.normalize('NFKC').trim().toLowerCase());
}
