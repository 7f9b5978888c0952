// Row types of federation (src/federation, docs/federation.md).

export interface ServerKeyLogTable {
  /** 0 for the first key, then 1, 2, ... */
  seq: number;
  /** The exact JSON text signed (`svc.key-log.v1`). */
  payload: string;
  /** Ed25519 over the payload's UTF-8 bytes, unpadded base64url. */
  signature: string;
  createdAt: number;
}

export interface S2sPeerTable {
  /** The peer's host[:port], lower-case (the `server:` principal). */
  serverId: string;
  origin: string;
  /** JSON array of the peer's key-log entries `{ payload, signature }` as verified. */
  keyLog: string;
  /** The key of the last entry, raw base64url. */
  currentKey: string;
  /** JSON array of the descriptor's roles. */
  roles: string;
  pinnedAt: number;
  refreshedAt: number;
}

export interface S2sNonceTable {
  /** `server:<id>` for a peer's signature, `device:<key>` for a device request. */
  scope: string;
  nonce: string;
  expiresAt: number;
}

export interface S2sOutboxTable {
  id: string;
  serverId: string;
  /** Path under /s2s/v1/. */
  path: string;
  /** JSON body. */
  body: string;
  attempts: number;
  nextAttemptAt: number;
  lastError: string | null;
  createdAt: number;
}

export interface RemoteDeviceTable {
  /** The local row of the person from another server. */
  accountId: string;
  /** Raw Ed25519 public key, base64url. */
  deviceKey: string;
  createdAt: number;
  revokedAt: number | null;
}

export interface RelayHostTable {
  accountId: string;
  hostServerId: string;
  firstUsedAt: number;
}
