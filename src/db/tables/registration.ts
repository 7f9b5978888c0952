// Row types of the tables services/registration owns (db/table-owners.ts): instance invites and
// used proof-of-work challenges. Timestamps in ms; booleans 0/1.

/** An invite to create an account on this server, made by an operator or the CLI. */
export interface InstanceInviteTable {
  id: string;
  /** SHA-256 of the invite token, base64url; the token itself is shown once and never stored. */
  tokenHash: string;
  /** The address the invite is bound to (the account gets it); null for anyone. */
  email: string | null;
  /** Lower-case form of `email`. */
  emailKey: string | null;
  /** Operator account id, or `cli`. */
  createdBy: string;
  createdAt: number;
  /** Null: never expires. */
  expiresAt: number | null;
  maxUses: number;
  uses: number;
  revokedAt: number | null;
}

/** A used registration proof-of-work challenge, kept until it expires so it cannot be replayed. */
export interface RegistrationPowUseTable {
  /** The challenge's salt, which is unique per challenge. */
  salt: string;
  usedAt: number;
  expiresAt: number;
}
