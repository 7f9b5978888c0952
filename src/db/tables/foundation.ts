// Row types of the foundation tables. Timestamps are milliseconds since the epoch (bigint on
// PostgreSQL, integer on SQLite); booleans are 0/1 integers so both dialects read alike.

export interface ServerKeyTable {
  /** `signing` (Ed25519, signs the discovery document and s2s calls) or `franking`. */
  kind: string;
  /** PKCS#8 DER, base64. */
  privateKey: string;
  /** SPKI DER, base64 (empty for the symmetric franking key). */
  publicKey: string;
  createdAt: number;
}

export interface InstanceTable {
  /** Always 1: one row that records the first boot of this database. */
  id: number;
  createdAt: number;
}

export interface IpBlockTable {
  /** Normalized CIDR (network address, canonical form). */
  cidr: string;
  reason: string | null;
  createdAt: number;
  expiresAt: number | null;
  /** Operator user id, or `cli`. */
  createdBy: string;
}

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

export interface SessionTable {
  id: string;
  /** SHA-256 of the session token, base64url; the token itself is never stored. */
  tokenHash: string;
  accountId: string;
  /** The device the session is bound to (key login), or null. */
  deviceId: string | null;
  createdAt: number;
  expiresAt: number;
  endedAt: number | null;
  endReason: string | null;
  ip: string | null;
  userAgent: string | null;
}
