import type { Logger } from 'pino';

import type { Config } from '../config/index.js';
import { assertRole } from '../config/roles.js';
import type { Db } from '../db/database.js';
import type { Tx } from '../db/transaction.js';
import { AppError } from '../errors.js';
import type { Clock } from '../lib/clock.js';
import { newId } from '../lib/ids.js';
import { findAccountById, findAccountByUsernameKey } from '../services/accounts/index.js';
import type { ServerKeys } from '../services/instance/index.js';
import { remoteUsernameKey } from '../services/principals/index.js';
import type { SessionService } from '../services/sessions/index.js';

import { decodeStatement, encodeStatement, signHeader, verifyHeader } from './device-request.js';
import { checkServerId, REMOTE_USER_RE } from './relay-refusal.js';
import { PeerKeyError, type PeerDirectory } from './peers.js';
import {
  countLiveRemoteDevices,
  hostsOfAccount,
  insertOutboxCall,
  revokeRemoteDevices,
} from './queries.js';
import type { S2sClient } from './s2s-client.js';

/** What a relay signs to revoke devices of one of its people at one host. */
interface RevocationStatement {
  type: 'svc.remote-revocation.v1';
  relay: string;
  host: string;
  /** The person's username at the relay. */
  user: string;
  /** Device keys; null for every device (the person is gone or blocked at the relay). */
  devices: string[] | null;
  issuedAt: string;
  /** The relay's current key, so a host follows a rotation. */
  key: string;
}

/**
 * Revocations across servers (docs/federation.md, "Revocation"). As a relay: statements signed
 * by this server's key, queued in the s2s outbox in the transaction of the revocation, block or
 * purge. As a host: a relay's statement verified and applied, from the relay over /s2s/v1 or
 * from anyone through `applyRemoteRevocation`.
 */
export class Revocations {
  constructor(
    private readonly deps: {
      db: Db;
      clock: Clock;
      log: Logger;
      config: Pick<Config, 'server'>;
      keys: ServerKeys;
      selfId: string | null;
      client: S2sClient | null;
      peers: PeerDirectory | null;
      sessions: SessionService;
      isServerBlocked: (serverId: string) => Promise<boolean>;
      /** Drops the host's cached sessions and event streams of a person. */
      forgetPerson: (accountId: string, events: boolean) => void;
    },
  ) {}

  /**
   * Relay side of a revocation: in the revoking transaction, one outbox call per host the person
   * used, so each host hears of it even across restarts (docs/federation.md, "Revocation").
   */
  async queueRevocation(
    tx: Tx,
    accountId: string,
    username: string,
    devices: string[] | null,
  ): Promise<void> {
    if (!this.deps.selfId) return;
    const hosts = await hostsOfAccount(tx.db, accountId);
    const now = this.deps.clock.now().getTime();
    for (const host of hosts) {
      await insertOutboxCall(tx.db, {
        id: newId(),
        serverId: host,
        path: 'revocations',
        body: JSON.stringify(this.revocationStatement(host, username, devices, now)),
        nextAttemptAt: now,
        createdAt: now,
      });
    }
  }

  /** A purged local account: every device of it is revoked at the hosts it used. */
  async onAccountPurged(tx: Tx, accountId: string): Promise<void> {
    const account = await findAccountById(tx.db, accountId);
    if (!account || account.homeServer !== null) return;
    await this.queueRevocation(tx, accountId, account.username, null);
  }

  /** A revocation signed by this relay's key, for one host (docs/federation.md, "Revocation"). */
  revocationStatement(
    host: string,
    user: string,
    devices: string[] | null,
    at: number,
  ): { statement: string; signature: string } {
    const statement: RevocationStatement = {
      type: 'svc.remote-revocation.v1',
      relay: this.deps.selfId!,
      host,
      user,
      devices,
      issuedAt: new Date(at).toISOString(),
      key: this.deps.keys.signingPublicRaw,
    };
    const value = encodeStatement(statement);
    return { statement: value, signature: signHeader(value, this.deps.keys.signing) };
  }

  /**
   * applyRemoteRevocation and /s2s/v1/revocations: a revocation statement its relay signed.
   * Replaying one changes nothing (devices are revoked once; a device first seen after the
   * statement was issued is not touched). `from` is the verified calling peer, when any.
   */
  async applyRevocationStatement(
    input: { statement: unknown; signature: unknown },
    from: string | null = null,
  ): Promise<{ revoked: number; sessionsEnded: number }> {
    // Host-only: a relay that hosts nothing for other servers has no one to revoke.
    assertRole(this.deps.config, 'host', 'applyRemoteRevocation');
    const { peers, selfId } = this.deps;
    const refused = (why: string) => {
      this.deps.log.warn({ from, why }, 'remote revocation refused');
      return new AppError('UNAUTHENTICATED', 'the revocation statement was not accepted');
    };
    if (typeof input.statement !== 'string' || typeof input.signature !== 'string') {
      throw new AppError('VALIDATION', 'send the statement and the signature as strings');
    }
    const s = decodeStatement<RevocationStatement>(input.statement);
    if (!s || s.type !== 'svc.remote-revocation.v1' || typeof s.relay !== 'string') {
      throw refused('not a revocation statement');
    }
    if (!peers || !selfId) throw refused('federation is off here');
    if (s.host !== selfId) throw refused(`the statement is for ${String(s.host)}`);
    let relay: string;
    try {
      relay = checkServerId(s.relay);
    } catch {
      throw refused('the statement names no relay');
    }
    if (from !== null && from !== relay) throw refused(`${from} sent a statement of ${relay}`);
    if (await this.deps.isServerBlocked(relay)) {
      throw new AppError('FORBIDDEN', 'this server does not accept calls from that relay');
    }
    let key: string;
    try {
      key = (await peers.keyOf(relay, typeof s.key === 'string' ? s.key : null)).key;
    } catch (err) {
      // The relay's key log was read and the statement's key is not its current key (or the log
      // forks from the pinned one): a forgery, refused as a bad signature is, never "try later",
      // which a client would retry forever. Only a relay that could not be read is unavailable.
      if (err instanceof PeerKeyError && (err.reason === 'unknown_key' || err.reason === 'fork')) {
        throw refused(`the statement's key is not ${relay}'s current key (${err.reason})`);
      }
      if (err instanceof PeerKeyError) {
        throw new AppError('UPSTREAM_UNAVAILABLE', `${relay} could not be verified; try later`, {
          hostServerId: relay,
          origin: this.deps.client?.originOf(relay) ?? null,
        });
      }
      throw err;
    }
    if (!verifyHeader(input.statement, input.signature, key)) throw refused('bad signature');
    const issuedAt = Date.parse(s.issuedAt);
    if (!Number.isFinite(issuedAt)) throw refused('issuedAt is not a time');
    return this.applyRevocation(relay, { user: s.user, devices: s.devices }, issuedAt);
  }

  /**
   * Host side of a revocation its relay sent: the named devices (or every device) of the person
   * are refused from now on, and their sessions here end at once.
   */
  private async applyRevocation(
    relay: string,
    input: { user: unknown; devices: unknown },
    issuedAt: number,
  ): Promise<{ revoked: number; sessionsEnded: number }> {
    if (typeof input.user !== 'string' || !REMOTE_USER_RE.test(input.user)) {
      throw new AppError('VALIDATION', 'user must be a username at the relay');
    }
    const devices =
      input.devices === null
        ? null
        : Array.isArray(input.devices) && input.devices.every((d) => typeof d === 'string')
          ? (input.devices as string[])
          : undefined;
    if (devices === undefined) throw new AppError('VALIDATION', 'devices must be a list or null');
    const usernameKey = `${remoteUsernameKey(input.user)}@${relay}`;
    const account = await findAccountByUsernameKey(this.deps.db.kysely, usernameKey);
    if (!account || account.homeServer?.toLowerCase() !== relay) {
      return { revoked: 0, sessionsEnded: 0 };
    }
    const now = this.deps.clock.now().getTime();
    let revoked = 0;
    let ended: string[] = [];
    await this.deps.db.transaction(async (tx) => {
      revoked = await revokeRemoteDevices(tx.db, account.id, devices, now, issuedAt);
      ended = await this.deps.sessions.end(tx, { accountId: account.id }, 'device_revoked');
    });
    // Their events keep flowing while a device of theirs is still allowed here.
    const left = await countLiveRemoteDevices(this.deps.db.kysely, account.id);
    this.deps.forgetPerson(account.id, left === 0);
    this.deps.log.info(
      { relay, user: input.user, revoked, sessionsEnded: ended.length },
      'remote revocation applied',
    );
    return { revoked, sessionsEnded: ended.length };
  }
}
