import { hash, verify } from '@node-rs/argon2';

// argon2id with OWASP's first recommended parameters (19 MiB, 2 passes, 1 lane).
const OPTIONS = { algorithm: 2, memoryCost: 19456, timeCost: 2, parallelism: 1 } as const;

// Passwords are hashed in NFKC (NIST SP 800-63B 5.1.1.2), so "é" typed as one code point on one
// keyboard and as e + accent on another is the same password.
const fold = (password: string) => password.normalize('NFKC');

/**
 * The password hash of an account made by `svc import` and not yet claimed: no password matches
 * it (it is not an argon2 hash), and a password reset replaces it, which is how its person
 * claims it (docs/operations.md, "Importing").
 */
export const UNCLAIMED_PASSWORD_HASH = '!unclaimed-import';

export function hashPassword(password: string): Promise<string> {
  return hash(fold(password), OPTIONS);
}

export async function verifyPassword(hashed: string, password: string): Promise<boolean> {
  try {
    return await verify(hashed, fold(password));
  } catch {
    return false;
  }
}

let dummy: Promise<string> | null = null;
/**
 * Runs a verification against a fixed hash, so an unknown username costs the same time as a
 * wrong password.
 */
export async function burnPasswordCheck(password: string): Promise<void> {
  dummy ??= hashPassword('not-a-real-password-only-for-timing');
  await verifyPassword(await dummy, password);
}
