import { validation } from '../../errors.js';

export const DISPLAY_NAME_MAX = 64;

/**
 * Checks a display name: NFC, trimmed, 1 to 64 characters, no control, format or separator
 * characters other than plain spaces (no bidi overrides or zero-width tricks). Empty or null
 * clears it.
 */
export function normalizeDisplayName(input: unknown): string | null {
  if (input === null || input === undefined) return null;
  if (typeof input !== 'string') throw validation('displayName must be a string');
  const name = input.normalize('NFC').trim();
  if (name === '') return null;
  if ([...name].length > DISPLAY_NAME_MAX) {
    throw validation(`displayName must be at most ${DISPLAY_NAME_MAX} characters long`);
  }
  if (/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Co}\p{Cn}]/u.test(name) || /[^\S ]/u.test(name)) {
    throw validation('displayName may not contain control, format or invisible characters');
  }
  return name;
}
