// Row types of the tables services/instance owns (db/table-owners.ts): the instance and its
// server keys. Timestamps are milliseconds since the epoch (bigint on PostgreSQL, integer on
// SQLite); booleans are 0/1 integers so both dialects read alike.

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
