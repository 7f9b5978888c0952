import type { Logger } from 'pino';

import type { Db } from '../db/database.js';
import { isUniqueViolation } from '../db/errors.js';
import type { Clock } from '../lib/clock.js';
import { verifyWithRawPublic } from '../services/instance/index.js';

import { KeyLogError, verifyKeyLog, type Signed } from './key-log.js';
import { getPeer, insertPeer, updatePeer } from './queries.js';
import { UpstreamError, type S2sClient } from './s2s-client.js';

/** A peer's key could not be established; the reason goes to the log, never to the peer. */
export class PeerKeyError extends Error {
  constructor(
    readonly serverId: string,
    readonly reason: 'unreachable' | 'bad_discovery' | 'fork' | 'unknown_key',
    detail: string,
  ) {
    super(`${serverId}: ${reason}: ${detail}`);
    this.name = 'PeerKeyError';
  }
}

export interface PeerKey {
  serverId: string;
  /** The peer's current key, raw base64url. */
  key: string;
  roles: string[];
}

/** Re-fetching a peer's discovery for an unknown key happens at most this often. */
const REFETCH_MS = 30_000;

/**
 * Other servers' keys, pinned on first contact (trust on first use) and followed only through
 * their signed key log: a newer log must extend the pinned one entry for entry; one that does
 * not (a fork, a key replaced without a signed rotation) is refused and logged, and the pin
 * stays. A signature by a key that is not the pinned current one causes one re-fetch of the
 * discovery document; after a re-fetch that did not help, none for 30 seconds for that peer.
 */
export class PeerDirectory {
  /** When a re-fetch last failed to give the key a signature named, per peer. */
  private readonly lastMiss = new Map<string, number>();

  constructor(private readonly deps: { db: Db; clock: Clock; client: S2sClient; log: Logger }) {}

  /**
   * The key of `serverId` that matches `wanted` (the key a signature names), or its current key
   * when `wanted` is null. Throws PeerKeyError.
   */
  async keyOf(serverId: string, wanted: string | null): Promise<PeerKey> {
    const row = await getPeer(this.deps.db.kysely, serverId);
    if (row && (wanted === null || row.currentKey === wanted)) {
      return { serverId, key: row.currentKey, roles: JSON.parse(row.roles) as string[] };
    }
    const now = this.deps.clock.now().getTime();
    const last = this.lastMiss.get(serverId) ?? -Infinity;
    if (row && now - last < REFETCH_MS) {
      throw new PeerKeyError(serverId, 'unknown_key', 'the key is not the pinned current key');
    }
    let fetched;
    try {
      fetched = await this.fetch(serverId);
    } catch (err) {
      this.miss(serverId, now);
      throw err;
    }
    if (!row) {
      try {
        await insertPeer(this.deps.db.kysely, {
          serverId,
          origin: this.deps.client.originOf(serverId),
          keyLog: JSON.stringify(fetched.log),
          currentKey: fetched.key,
          roles: JSON.stringify(fetched.roles),
          pinnedAt: now,
          refreshedAt: now,
        });
        this.deps.log.info({ peer: serverId, key: fetched.key }, 'peer key pinned');
      } catch (err) {
        if (!isUniqueViolation(err)) throw err;
        return this.keyOf(serverId, wanted);
      }
    } else {
      const pinned = JSON.parse(row.keyLog) as Signed[];
      const extends_ =
        fetched.log.length >= pinned.length &&
        pinned.every(
          (p, i) =>
            p.payload === fetched.log[i]?.payload && p.signature === fetched.log[i]?.signature,
        );
      if (!extends_) {
        this.deps.log.warn(
          { peer: serverId, pinned: row.currentKey, offered: fetched.key },
          'peer key log does not extend the pinned one (fork); keeping the pin',
        );
        this.miss(serverId, now);
        throw new PeerKeyError(serverId, 'fork', 'the key log does not extend the pinned log');
      }
      if (fetched.log.length > pinned.length) {
        this.deps.log.info(
          { peer: serverId, from: row.currentKey, to: fetched.key },
          'peer key rotation followed',
        );
      }
      await updatePeer(this.deps.db.kysely, serverId, {
        keyLog: JSON.stringify(fetched.log),
        currentKey: fetched.key,
        roles: JSON.stringify(fetched.roles),
        refreshedAt: now,
      });
    }
    if (wanted !== null && fetched.key !== wanted) {
      this.miss(serverId, now);
      throw new PeerKeyError(serverId, 'unknown_key', 'the key is not the current key');
    }
    return { serverId, key: fetched.key, roles: fetched.roles };
  }

  private miss(serverId: string, now: number): void {
    if (this.lastMiss.size > 10_000) this.lastMiss.clear();
    this.lastMiss.set(serverId, now);
  }

  /** Fetches and checks a peer's discovery document (docs/discovery.md, "Verification"). */
  private async fetch(serverId: string): Promise<{ log: Signed[]; key: string; roles: string[] }> {
    let doc: unknown;
    try {
      doc = await this.deps.client.discovery(serverId);
    } catch (err) {
      const detail = err instanceof UpstreamError ? err.message : String(err);
      throw new PeerKeyError(serverId, 'unreachable', detail);
    }
    const d = doc as { svc?: unknown; keyLog?: unknown; descriptor?: Partial<Signed> };
    if (d?.svc !== 'server-discovery') {
      throw new PeerKeyError(serverId, 'bad_discovery', 'not a discovery document');
    }
    let keys: string[];
    try {
      keys = verifyKeyLog(d.keyLog).keys;
    } catch (err) {
      const detail = err instanceof KeyLogError ? err.message : String(err);
      throw new PeerKeyError(serverId, 'bad_discovery', detail);
    }
    const key = keys.at(-1)!;
    const desc = d.descriptor;
    if (
      typeof desc?.payload !== 'string' ||
      typeof desc.signature !== 'string' ||
      !verifyWithRawPublic(key, Buffer.from(desc.payload, 'utf8'), desc.signature)
    ) {
      throw new PeerKeyError(serverId, 'bad_discovery', 'the descriptor is not signed by the key');
    }
    let descriptor: {
      type?: unknown;
      origin?: unknown;
      serverId?: unknown;
      key?: unknown;
      roles?: unknown;
    };
    try {
      descriptor = JSON.parse(desc.payload) as typeof descriptor;
    } catch {
      throw new PeerKeyError(serverId, 'bad_discovery', 'the descriptor is not JSON');
    }
    if (
      descriptor.type !== 'svc.server-descriptor.v1' ||
      descriptor.key !== key ||
      descriptor.origin !== this.deps.client.originOf(serverId) ||
      (descriptor.serverId !== undefined && descriptor.serverId !== serverId) ||
      !Array.isArray(descriptor.roles)
    ) {
      throw new PeerKeyError(
        serverId,
        'bad_discovery',
        `the descriptor is for ${String(descriptor.origin)}, not ${this.deps.client.originOf(serverId)}`,
      );
    }
    return {
      log: (d.keyLog as Signed[]).map((s) => ({ payload: s.payload, signature: s.signature })),
      key,
      roles: descriptor.roles as string[],
    };
  }
}
