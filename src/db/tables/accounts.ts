// Row types of the tables services/accounts owns (db/table-owners.ts): accounts and password
// resets. Timestamps in ms; booleans 0/1.

export interface AccountTable {
  id: string;
  /** As chosen, after NFKC normalization. */
  username: string;
  /** Lower-case form; unique, so `Alice` and `alice` cannot both exist. */
  usernameKey: string;
  displayName: string | null;
  email: string | null;
  /** Lower-case form of `email`; unique when set. */
  emailKey: string | null;
  passwordHash: string | null;
  /** The key identity (device-key account) this account belongs to; kept on the tombstone. */
  keyIdentityId: string | null;
  /** Home server of a person from another server signed in here; null for local accounts. */
  homeServer: string | null;
  isOperator: number;
  avatarPath: string | null;
  acceptedTermsUrl: string | null;
  acceptedTermsAt: number | null;
  createdAt: number;
  deletionRequestedAt: number | null;
  deletionScheduledFor: number | null;
  /** Set when the account was purged; the row stays as a tombstone. */
  deletedAt: number | null;
}

/** A password reset token sent by mail. */
export interface PasswordResetTable {
  id: string;
  /** SHA-256 of the reset token, base64url. */
  tokenHash: string;
  accountId: string;
  createdAt: number;
  expiresAt: number;
  usedAt: number | null;
}
