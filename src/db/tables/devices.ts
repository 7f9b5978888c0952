// Row types of key identities, devices, key challenges and device-link offers (migration
// 0004-devices; docs/keys.md). Timestamps in ms; booleans 0/1.

/**
 * An account-level Ed25519 identity key. Rows are never deleted: a rotated key stays (with
 * `retiredAt`) and a purged account keeps its rows without the public key, so the same identity
 * can never sign up again.
 */
export interface KeyIdentityTable {
  /** `kid_` + the first 22 characters of base64url(SHA-256(raw public key)). */
  id: string;
  accountId: string;
  /** Raw 32-byte public key, base64url; null once the account was purged. */
  publicKey: string | null;
  createdAt: number;
  /** When a rotation replaced it; null for the account's current identity. */
  retiredAt: number | null;
  /** The identity that replaced it. */
  replacedBy: string | null;
}

/** One device of an account: an Ed25519 device key bound to the account's key identity. */
export interface DeviceTable {
  id: string;
  accountId: string;
  /** Raw 32-byte public key, base64url; unique across the server, revoked devices included. */
  publicKey: string;
  name: string;
  createdAt: number;
  lastUsedAt: number | null;
  /** Set when revoked; the key can then never sign in or be registered again. */
  revokedAt: number | null;
  /** The device's current MLS key package, opaque base64; null until it publishes one. */
  keyPackage: string | null;
  keyPackageAt: number | null;
}

/** A single-use nonce for a signed key statement (login, signup, link, enrolment, rotation). */
export interface KeyChallengeTable {
  id: string;
  nonce: string;
  createdAt: number;
  expiresAt: number;
  usedAt: number | null;
  /** The server key the challenge was issued under (null: issued before it was recorded). */
  serverKey: string | null;
}

export type DeviceLinkOfferState = 'pending' | 'approved' | 'cancelled';

/** A new device asking to join an account; a signed-in device of that account approves it. */
export interface DeviceLinkOfferTable {
  id: string;
  accountId: string;
  publicKey: string;
  deviceName: string;
  /** SHA-256 of the short code shown on the new device, base64url. */
  codeHash: string;
  /** SHA-256 of the secret the new device holds to read or cancel its offer, base64url. */
  secretHash: string;
  state: DeviceLinkOfferState;
  failedAttempts: number;
  createdAt: number;
  expiresAt: number;
  resolvedAt: number | null;
  /** The device created on approval. */
  deviceId: string | null;
}
