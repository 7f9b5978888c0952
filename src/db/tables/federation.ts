import type { Generated } from 'kysely';

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

export interface RemoteEventTable {
  /** The order events were recorded in (numbered by the database). */
  seq: Generated<number>;
  /** The local row of the person from another server the event is for. */
  accountId: string;
  /** The event's id (`RelayedEvent.id`): the same event recorded twice is one row. */
  eventId: string;
  /** The event as sent, JSON text (`RelayedEvent`). */
  body: string;
  createdAt: number;
  /** When the relay acknowledged it; null while it waits. */
  deliveredAt: number | null;
}

export interface RemoteEventDeliveryTable {
  accountId: string;
  /** The person's relay (server id) and their username there. */
  relay: string;
  username: string;
  /** Failed attempts since the last delivery. */
  attempts: number;
  /** No attempt before this time (backoff after a failure). */
  nextAttemptAt: number;
  /** A process is sending this person's events until then (0: nobody). */
  leasedUntil: number;
  lastError: string | null;
}

export interface RelayEventTable {
  /** The local person the host sent the event for. */
  accountId: string;
  hostServerId: string;
  eventId: string;
  /** Forgotten after this time. */
  expiresAt: number;
}
