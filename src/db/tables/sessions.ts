// Row types of the table services/sessions owns (db/table-owners.ts). Timestamps in ms.

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
