// Row types of the table services/ip-blocks owns (db/table-owners.ts). Timestamps in ms.

export interface IpBlockTable {
  /** Normalized CIDR (network address, canonical form). */
  cidr: string;
  reason: string | null;
  createdAt: number;
  expiresAt: number | null;
  /** Operator user id, or `cli`. */
  createdBy: string;
}
