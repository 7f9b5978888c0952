import { createHash, randomInt, timingSafeEqual } from 'node:crypto';

import { actingAccountId, actingUser, type Actor, type UserActor } from '../../auth/actor.js';
import { parsePublicKey } from '../../auth/device-keys.js';
import type { Config } from '../../config/index.js';
import type { Tx } from '../../db/transaction.js';
import type { Db } from '../../db/database.js';
import type { DeviceTable } from '../../db/tables/devices.js';
import { AppError, conflict, forbidden, notFound, rateLimited, validation } from '../../errors.js';
import { MINUTE_MS, type Clock } from '../../lib/clock.js';
import { isId, newId, randomToken } from '../../lib/ids.js';
import { isUniqueViolation } from '../../db/errors.js';
import { findAccountById, findAccountByUsernameKey, lookupKey } from '../accounts/index.js';
import type { DeviceUseHook, SessionService } from '../sessions/index.js';

import {
  assertDeviceKeyFree,
  assertDeviceRoom,
  assertLocal,
  checkDeviceName,
  deviceView,
  type DeviceView,
} from './device-rules.js';
import type { KeyChallenges } from './key-challenges.js';
import {
  accountHasEncryptionDevice,
  countActiveDevices,
  deferTouchDevice,
  deleteLinkOffersBefore,
  findDeviceById,
  findLinkOffer,
  insertDevice,
  insertLinkOffer,
  listActiveDevices,
  listPendingLinkOffers,
  lockAccount,
  pendingOfferForKey,
  recordWrongCode,
  resolveLinkOffer,
  revokeDeviceRow,
  touchDeviceAfterStatement,
} from './queries.js';

/**
 * Runs inside the transaction that revokes a device (federation tells the hosts the person
 * used, through its outbox, so the news survives a crash after the commit).
 */
export type DeviceRevokedHook = (
  tx: Tx,
  revoked: { accountId: string; username: string; deviceKey: string },
) => Promise<void>;

/** How long a device-link offer waits for approval. */
export const LINK_OFFER_TTL_MS = 10 * MINUTE_MS;
/** Pending offers one account may hold at once. */
export const LINK_OFFERS_PENDING_MAX = 5;
/** Wrong codes an offer survives; the next one cancels it. */
export const LINK_CODE_ATTEMPTS = 5;

// Crockford-style base32 without the letters people confuse (I, L, O, U).
const CODE_ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
const CODE_LENGTH = 8;

const sha256 = (text: string) => createHash('sha256').update(text).digest('base64url');

const sameHash = (a: string, b: string) => {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
};

/** Upper-case, without spaces and dashes, so `abcd-efgh` and `ABCDEFGH` are the same code. */
const normalizeCode = (code: string) => code.replace(/[\s-]/g, '').toUpperCase();

export interface LinkOfferIssued {
  offerId: string;
  code: string;
  offerSecret: string;
  expiresAt: number;
}

export interface PendingLinkOfferView {
  id: string;
  deviceName: string;
  devicePublicKey: string;
  createdAt: number;
  expiresAt: number;
}

export type LinkOfferStatus = 'PENDING' | 'APPROVED' | 'CANCELLED' | 'EXPIRED';

/**
 * An account's devices: listing, linking a new device (offer from the new device, approval from
 * a signed-in one), revocation and MLS key packages (docs/keys.md).
 */
export class DeviceService {
  constructor(
    private readonly db: Db,
    private readonly config: Config,
    private readonly clock: Clock,
    private readonly sessions: SessionService,
    private readonly challenges: KeyChallenges,
  ) {}

  private readonly revokedHooks: DeviceRevokedHook[] = [];

  /** A session started on a device records the device's last use (wiring.ts registers it). */
  readonly sessionUse: DeviceUseHook = {
    afterInsert: (db, deviceId, at) => touchDeviceAfterStatement(db, deviceId, at),
    inTransaction: (tx, deviceId, at) => deferTouchDevice(tx, deviceId, at),
  };

  /** Adds work to every device revocation's transaction. */
  onRevoked(hook: DeviceRevokedHook): void {
    this.revokedHooks.push(hook);
  }

  async list(actor: Actor): Promise<DeviceView[]> {
    const accountId = actingAccountId(actor);
    return (await listActiveDevices(this.db.kysely, accountId)).map(deviceView);
  }

  /** Whether a device is the one the actor's session signed in with. */
  isCurrent(actor: Actor | null, deviceId: string): boolean {
    return actor?.kind === 'user' && actor.deviceId === deviceId;
  }

  /** Whether any live device of the account has published an MLS key package. */
  async hasEncryptionDevice(accountId: string): Promise<boolean> {
    return accountHasEncryptionDevice(this.db.kysely, accountId);
  }

  /**
   * From a device that is not signed in: asks to join `username`'s account. The device proves
   * it holds its key by signing the `device-link` statement. Answers the short code the user
   * types on a signed-in device, and the secret this device uses to follow or cancel the offer.
   */
  async sendLinkOffer(input: {
    username: unknown;
    devicePublicKey: unknown;
    deviceName?: unknown;
    challengeId: unknown;
    issuedAt: unknown;
    signature: unknown;
  }): Promise<LinkOfferIssued> {
    if (
      typeof input.username !== 'string' ||
      input.username.length > 64 ||
      /[\p{Cc}\u2028\u2029]/u.test(input.username)
    ) {
      throw validation('username must be the username of the account to join');
    }
    const devicePublicKey = parsePublicKey(input.devicePublicKey, 'devicePublicKey');
    const deviceName = checkDeviceName(input.deviceName);
    await this.challenges.verify({
      audience: 'device-link',
      challengeId: input.challengeId,
      issuedAt: input.issuedAt,
      extra: [
        ['username', input.username],
        ['device', devicePublicKey],
      ],
      signers: [{ publicKey: devicePublicKey, field: 'signature', signature: input.signature }],
    });
    const now = this.clock.now().getTime();
    const account = await findAccountByUsernameKey(this.db.kysely, lookupKey(input.username));
    if (!account || account.homeServer !== null) throw notFound('account');
    if (account.keyIdentityId === null) {
      throw validation(
        'this account signs in with a password and has no devices; enroll an identity key first',
      );
    }
    const code = Array.from(
      { length: CODE_LENGTH },
      () => CODE_ALPHABET[randomInt(CODE_ALPHABET.length)],
    ).join('');
    const secret = randomToken(32);
    const offerId = newId();
    const expiresAt = now + LINK_OFFER_TTL_MS;
    await this.db.transaction(async (tx) => {
      await deleteLinkOffersBefore(tx.db, now - 24 * 60 * MINUTE_MS);
      await assertDeviceKeyFree(tx.db, devicePublicKey);
      if (await pendingOfferForKey(tx.db, devicePublicKey, now)) {
        throw conflict('an offer with this device key is pending already');
      }
      assertDeviceRoom(
        await countActiveDevices(tx.db, account.id),
        this.config.limits.devicesPerUser,
      );
      const pending = await listPendingLinkOffers(tx.db, account.id, now);
      if (pending.length >= LINK_OFFERS_PENDING_MAX) {
        throw rateLimited(
          (pending[0]!.expiresAt - now) / 1000,
          'too many device-link offers are waiting for this account',
        );
      }
      await insertLinkOffer(tx.db, {
        id: offerId,
        accountId: account.id,
        publicKey: devicePublicKey,
        deviceName,
        codeHash: sha256(code),
        secretHash: sha256(secret),
        state: 'pending',
        failedAttempts: 0,
        createdAt: now,
        expiresAt,
        resolvedAt: null,
        deviceId: null,
      });
    });
    return {
      offerId,
      code: `${code.slice(0, 4)}-${code.slice(4)}`,
      offerSecret: secret,
      expiresAt,
    };
  }

  /** The offer's state, for the new device that holds its secret. */
  async linkOfferStatus(offerId: unknown, offerSecret: unknown): Promise<LinkOfferStatus> {
    const offer = await this.offerBySecret(offerId, offerSecret);
    if (offer.state === 'approved') return 'APPROVED';
    if (offer.state === 'cancelled') return 'CANCELLED';
    return offer.expiresAt <= this.clock.now().getTime() ? 'EXPIRED' : 'PENDING';
  }

  /** Offers waiting for approval by one of the caller's devices; the code is not among them. */
  async pendingLinkOffers(actor: Actor): Promise<PendingLinkOfferView[]> {
    const session = actingUser(actor);
    const rows = await listPendingLinkOffers(
      this.db.kysely,
      session.accountId,
      this.clock.now().getTime(),
    );
    return rows.map((r) => ({
      id: r.id,
      deviceName: r.deviceName,
      devicePublicKey: r.publicKey,
      createdAt: r.createdAt,
      expiresAt: r.expiresAt,
    }));
  }

  /**
   * From a signed-in device of the account: adds the offered device once the user typed the
   * code the new device shows. Wrong codes count; the fifth cancels the offer.
   */
  async approveLink(
    actor: Actor,
    input: { offerId: unknown; code: unknown; deviceName?: unknown },
  ): Promise<DeviceView> {
    const session = actingUser(actor);
    assertLocal(session);
    if (session.deviceId === null) {
      throw forbidden('approve a device link from a signed-in device of this account');
    }
    if (typeof input.code !== 'string' || input.code.length > 32) {
      throw validation('code must be the code the new device shows');
    }
    const offer = await this.ownOffer(session, input.offerId);
    const now = this.clock.now().getTime();
    if (offer.state !== 'pending') throw conflict(`the offer was ${offer.state} already`);
    if (offer.expiresAt <= now) throw validation('the offer has expired; send a new one');
    const name =
      input.deviceName === undefined || input.deviceName === null
        ? offer.deviceName
        : checkDeviceName(input.deviceName);
    if (!sameHash(sha256(normalizeCode(input.code)), offer.codeHash)) {
      await recordWrongCode(this.db.kysely, offer.id, LINK_CODE_ATTEMPTS, now);
      const left = LINK_CODE_ATTEMPTS - offer.failedAttempts - 1;
      throw validation(
        left > 0
          ? `wrong code; ${left} attempt${left === 1 ? '' : 's'} left`
          : 'wrong code; the offer is cancelled, send a new one',
      );
    }
    const id = newId();
    try {
      await this.db.transaction(async (tx) => {
        await lockAccount(tx.db, session.accountId, this.db.dialect);
        assertDeviceRoom(
          await countActiveDevices(tx.db, session.accountId),
          this.config.limits.devicesPerUser,
        );
        if (!(await resolveLinkOffer(tx.db, offer.id, 'approved', now, id))) {
          throw conflict('the offer is no longer pending');
        }
        await insertDevice(tx.db, {
          id,
          accountId: session.accountId,
          publicKey: offer.publicKey,
          name,
          createdAt: now,
          lastUsedAt: null,
          revokedAt: null,
          keyPackage: null,
          keyPackageAt: null,
        });
      });
    } catch (err) {
      if (isUniqueViolation(err)) throw conflict('this device key is registered already');
      throw err;
    }
    return deviceView((await findDeviceById(this.db.kysely, id))!);
  }

  /**
   * Cancels a pending offer: by the new device with its secret, or by a signed-in device of the
   * account. True when a pending offer was cancelled.
   */
  async cancelLink(actor: Actor | null, offerId: unknown, offerSecret: unknown): Promise<boolean> {
    const session = actor && actingUser(actor);
    let offer;
    if (offerSecret !== undefined && offerSecret !== null) {
      offer = await this.offerBySecret(offerId, offerSecret);
    } else {
      if (!session) {
        throw new AppError(
          'UNAUTHENTICATED',
          'sign in, or pass the offerSecret that sendDeviceLinkOffer answered',
        );
      }
      assertLocal(session);
      offer = await this.ownOffer(session, offerId);
    }
    const now = this.clock.now().getTime();
    if (offer.state !== 'pending' || offer.expiresAt <= now) return false;
    return resolveLinkOffer(this.db.kysely, offer.id, 'cancelled', now);
  }

  /**
   * Revokes one of the caller's devices and ends its sessions at once (WebSockets close with
   * 4401). The last device of an account without a password cannot go: nothing could sign in.
   */
  async revoke(actor: Actor, deviceId: unknown): Promise<{ endedOwnSession: boolean }> {
    const session = actingUser(actor);
    assertLocal(session);
    const device = await this.ownDevice(session, deviceId);
    const account = await findAccountById(this.db.kysely, session.accountId);
    const now = this.clock.now().getTime();
    let ended: string[] = [];
    await this.db.transaction(async (tx) => {
      await lockAccount(tx.db, session.accountId, this.db.dialect);
      const count = await countActiveDevices(tx.db, session.accountId);
      if (count <= 1 && account?.passwordHash === null) {
        throw validation(
          'this is the last device of the account and nothing else can sign in; delete the account instead',
        );
      }
      if (!(await revokeDeviceRow(tx.db, device.id, now))) throw notFound('device');
      ended = await this.sessions.end(tx, { deviceId: device.id }, 'device_revoked');
      for (const hook of this.revokedHooks) {
        await hook(tx, {
          accountId: session.accountId,
          username: session.username,
          deviceKey: device.publicKey,
        });
      }
    });
    return { endedOwnSession: ended.includes(session.sessionId) };
  }

  /**
   * The caller's own live device that the calling session is bound to (key packages are
   * published by the device itself): NOT_FOUND for another account's or a revoked device,
   * FORBIDDEN from any other session.
   */
  async callingDevice(actor: Actor, deviceId: unknown): Promise<DeviceTable> {
    const session = actingUser(actor);
    assertLocal(session);
    const device = await this.ownDevice(session, deviceId);
    if (session.deviceId !== device.id) {
      throw forbidden('a device publishes its own key packages; sign in on that device');
    }
    return device;
  }

  /** One device of the caller's, as the API shows it (after publishing key packages). */
  async deviceOf(actor: Actor, deviceId: string): Promise<DeviceView> {
    const session = actingUser(actor);
    return deviceView(await this.ownDevice(session, deviceId));
  }

  private async ownDevice(session: UserActor, deviceId: unknown) {
    if (typeof deviceId !== 'string' || !isId(deviceId)) throw notFound('device');
    const device = await findDeviceById(this.db.kysely, deviceId);
    if (!device || device.accountId !== session.accountId || device.revokedAt !== null) {
      throw notFound('device');
    }
    return device;
  }

  private async ownOffer(session: UserActor, offerId: unknown) {
    if (typeof offerId !== 'string' || !isId(offerId)) throw notFound('device-link offer');
    const offer = await findLinkOffer(this.db.kysely, offerId);
    if (!offer || offer.accountId !== session.accountId) throw notFound('device-link offer');
    return offer;
  }

  private async offerBySecret(offerId: unknown, offerSecret: unknown) {
    if (typeof offerId !== 'string' || !isId(offerId)) throw notFound('device-link offer');
    if (typeof offerSecret !== 'string' || offerSecret.length > 100) {
      throw notFound('device-link offer');
    }
    const offer = await findLinkOffer(this.db.kysely, offerId);
    if (!offer || !sameHash(sha256(offerSecret), offer.secretHash)) {
      throw notFound('device-link offer');
    }
    return offer;
  }
}
