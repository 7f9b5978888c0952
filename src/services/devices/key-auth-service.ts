import { actingAccountId, actingUser, type Actor } from '../../auth/actor.js';
import { keyIdentityId, parsePublicKey } from '../../auth/device-keys.js';
import type { Config } from '../../config/index.js';
import type { Db, Executor } from '../../db/database.js';
import type { Tx } from '../../db/transaction.js';
import { AppError, conflict, notFound, validation } from '../../errors.js';
import type { Clock } from '../../lib/clock.js';
import { isId, newId } from '../../lib/ids.js';
import {
  toAccountView,
  findAccountById,
  findAccountByUsernameKey,
  insertAccount,
  newAccountRow,
  setAccountKeyIdentity,
  normalizeDisplayName,
  normalizeUsername,
  type AccountService,
  type AccountView,
} from '../accounts/index.js';
import { isUniqueViolation } from '../../db/errors.js';
import type { SignupPolicy, SignupRequest } from '../registration/index.js';
import type { IssuedSession, SessionService } from '../sessions/index.js';

import {
  assertDeviceKeyFree,
  assertDeviceRoom,
  assertLocal,
  checkDeviceName,
  deviceView,
  newDeviceRow,
  parseKeyPair,
  type DeviceView,
} from './device-rules.js';
import type { KeyChallenges } from './key-challenges.js';
import {
  countActiveDevices,
  findCurrentKeyIdentity,
  findDeviceById,
  findSigningDevice,
  spendChallengeFindingDevice,
  findKeyIdentity,
  insertDevice,
  insertKeyIdentity,
  lockAccount,
  retireKeyIdentity,
  revokeDeviceRow,
} from './queries.js';

export interface KeyIdentityView {
  id: string;
  publicKey: string;
  createdAt: number;
}

export interface SignedIn {
  account: AccountView;
  session: IssuedSession;
  serverId: string | null;
}

const unauthenticated = (message: string) => new AppError('UNAUTHENTICATED', message);

/** At most this many devices are revoked by one identity recovery. */
const MAX_RECOVERY_REVOCATIONS = 100;

/** `revokeDeviceIds` of a rotation: device ids, distinct, in the order sent (the statement's). */
function parseRevokeDeviceIds(value: unknown): string[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value) || value.length > MAX_RECOVERY_REVOCATIONS) {
    throw validation(`revokeDeviceIds takes at most ${MAX_RECOVERY_REVOCATIONS} device ids`);
  }
  for (const id of value) {
    if (typeof id !== 'string' || !isId(id)) throw validation('revokeDeviceIds must be device ids');
  }
  if (new Set(value).size !== value.length) throw validation('revokeDeviceIds repeats an id');
  return value as string[];
}

/**
 * Sign-in and account changes proven with keys (docs/keys.md): key login, key signup, adopting
 * an identity key (enrolment) and replacing it (rotation).
 */
/**
 * A new identity key with its first device, and both keys' signatures of the statement that
 * binds them (signup, enrolment).
 */
export interface KeyPairProof {
  identityPublicKey: unknown;
  devicePublicKey: unknown;
  deviceName?: unknown;
  challengeId: unknown;
  issuedAt: unknown;
  identitySignature: unknown;
  deviceSignature: unknown;
}

export class KeyAuthService {
  constructor(
    private readonly db: Db,
    private readonly config: Config,
    private readonly clock: Clock,
    private readonly sessions: SessionService,
    private readonly accounts: AccountService,
    /** Issues the challenges every key statement signs (keyLoginChallenge). */
    readonly challenges: KeyChallenges,
    private readonly signup: SignupPolicy,
  ) {}

  /** Signs a device in with the `login` statement; the session is bound to the device. */
  async login(input: {
    proof: {
      challengeId: unknown;
      deviceId?: unknown;
      devicePublicKey?: unknown;
      issuedAt: unknown;
      signature: unknown;
    };
    ip: string | null;
    userAgent: string | null;
  }): Promise<SignedIn> {
    const { proof } = input;
    const byKey =
      proof.devicePublicKey === undefined || proof.devicePublicKey === null
        ? null
        : parsePublicKey(proof.devicePublicKey, 'devicePublicKey');
    const byId = proof.deviceId === undefined || proof.deviceId === null ? null : proof.deviceId;
    if (byKey === null && byId === null) {
      throw validation('name the device by deviceId or devicePublicKey');
    }
    if (byId !== null && (typeof byId !== 'string' || !isId(byId))) {
      throw validation('deviceId must be a device id');
    }
    const request = this.challenges.request({
      challengeId: proof.challengeId,
      issuedAt: proof.issuedAt,
      signers: [{ field: 'signature', signature: proof.signature }],
    });
    // The challenge is spent whatever the lookup finds, so an unknown device and a wrong
    // signature cost the same and answer alike. On PostgreSQL the two are one statement.
    const by = byKey ? { publicKey: byKey } : { id: byId as string };
    const { spent, found } =
      this.db.dialect === 'postgres'
        ? await spendChallengeFindingDevice(
            this.db.kysely,
            { id: request.challengeId, now: request.now },
            by,
          )
        : {
            found: await findSigningDevice(this.db.kysely, by),
            spent: await this.challenges.spend(request),
          };
    const device = found?.device;
    const publicKey = device?.publicKey ?? byKey;
    const known =
      device !== undefined &&
      device.revokedAt === null &&
      (byId === null || device.id === byId) &&
      (byKey === null || device.publicKey === byKey);
    try {
      await this.challenges.conclude(request, spent, {
        audience: 'login',
        extra: [['device', publicKey ?? '']],
        signers: [{ publicKey: publicKey ?? 'A'.repeat(43), field: 'signature' }],
      });
    } catch (err) {
      if (err instanceof AppError && err.code === 'UNAUTHENTICATED' && !known) {
        throw unauthenticated('unknown or revoked device, or a wrong signature');
      }
      throw err;
    }
    if (!known) throw unauthenticated('unknown or revoked device, or a wrong signature');
    // Read with the device, before the signature's check; only looked at after it.
    const account = found?.account;
    if (!account || account.deletedAt !== null) {
      throw unauthenticated('unknown or revoked device, or a wrong signature');
    }
    // The session's insert checks the account is still there and unblocked; the device's last
    // use is recorded with it, only when it starts (one statement on PostgreSQL, one commit on
    // SQLite).
    const session = await this.sessions.startOnDevice({
      accountId: account.id,
      deviceId: device.id,
      ip: input.ip,
      userAgent: input.userAgent,
    });
    // The account as read above: the session's start checked it is still there and unblocked.
    return { account: toAccountView(account), session, serverId: null };
  }

  /**
   * Creates a key account (no password) with its identity key and first device, and signs that
   * device in. Both keys sign the `signup` statement.
   */
  async signupWithKey(
    input: KeyPairProof & {
      username: unknown;
      displayName?: unknown;
      request: SignupRequest;
      ip: string | null;
      userAgent: string | null;
    },
  ): Promise<SignedIn> {
    const policy = this.signup;
    const { username, key } = normalizeUsername(input.username);
    const { identityKey, deviceKey } = parseKeyPair(input);
    const deviceName = checkDeviceName(input.deviceName);
    const displayName = normalizeDisplayName(input.displayName);
    policy.precheck(input.request);
    await this.verifyKeyPair('signup', input, ['username', input.username as string], {
      identityKey,
      deviceKey,
    });
    const kid = keyIdentityId(identityKey);
    const accountId = newId();
    const deviceId = newId();
    const now = this.clock.now().getTime();
    try {
      const { session, serverId } = await this.db.transaction(async (tx) => {
        await this.assertIdentityFree(tx.db, kid);
        await assertDeviceKeyFree(tx.db, deviceKey);
        if (await findAccountByUsernameKey(tx.db, key)) {
          throw conflict(`the username "${username}" is taken`);
        }
        const admission = await policy.admit(tx, input.request);
        await insertAccount(
          tx.db,
          newAccountRow(
            accountId,
            { username, usernameKey: key, displayName, passwordHash: null, keyIdentityId: kid },
            now,
          ),
        );
        await insertKeyIdentity(tx.db, newKeyIdentityRow(kid, accountId, identityKey, now));
        await insertDevice(
          tx.db,
          newDeviceRow(deviceId, accountId, deviceKey, deviceName, now, now),
        );
        const completed = await policy.completeSignup(tx, accountId, admission);
        const session = await this.sessions.start(tx.db, {
          accountId,
          deviceId,
          ip: input.ip,
          userAgent: input.userAgent,
        });
        return { session, serverId: completed.serverId };
      });
      return { account: await this.accounts.get(accountId), session, serverId };
    } catch (err) {
      if (isUniqueViolation(err)) {
        throw conflict('the username, identity key or device key was taken at the same moment');
      }
      throw err;
    }
  }

  /**
   * A password account adopts an identity key with this device as its first: other sessions
   * end, this session is bound to the new device, and password sign-in stops working.
   */
  async enroll(
    actor: Actor,
    input: KeyPairProof,
  ): Promise<{ account: AccountView; device: DeviceView; identity: KeyIdentityView }> {
    const session = actingUser(actor);
    assertLocal(session);
    const { identityKey, deviceKey } = parseKeyPair(input);
    const deviceName = checkDeviceName(input.deviceName);
    const account = await findAccountById(this.db.kysely, session.accountId);
    if (!account || account.keyIdentityId !== null) {
      throw conflict('this account has an identity key already; rotate it instead');
    }
    await this.verifyKeyPair('enroll-identity', input, ['account', session.accountId], {
      identityKey,
      deviceKey,
    });
    const kid = keyIdentityId(identityKey);
    const deviceId = newId();
    const now = this.clock.now().getTime();
    try {
      await this.db.transaction(async (tx) => {
        await lockAccount(tx.db, session.accountId, this.db.dialect);
        const current = await findAccountById(tx.db, session.accountId);
        if (!current || current.keyIdentityId !== null) {
          throw conflict('this account has an identity key already; rotate it instead');
        }
        await this.assertIdentityFree(tx.db, kid);
        await assertDeviceKeyFree(tx.db, deviceKey);
        assertDeviceRoom(
          await countActiveDevices(tx.db, session.accountId),
          this.config.limits.devicesPerUser,
        );
        await insertKeyIdentity(tx.db, newKeyIdentityRow(kid, session.accountId, identityKey, now));
        await insertDevice(
          tx.db,
          newDeviceRow(deviceId, session.accountId, deviceKey, deviceName, now, now),
        );
        await setAccountKeyIdentity(tx.db, session.accountId, kid, { dropPassword: true });
        await this.sessions.end(
          tx,
          { accountId: session.accountId, exceptSessionId: session.sessionId },
          'identity_key_enrolled',
        );
        await this.sessions.bindToDevice(tx, session.sessionId, deviceId);
      });
    } catch (err) {
      if (isUniqueViolation(err)) {
        throw conflict('the identity key or device key was taken at the same moment');
      }
      throw err;
    }
    const device = (await findDeviceById(this.db.kysely, deviceId))!;
    return {
      account: await this.accounts.get(session.accountId),
      device: deviceView(device),
      identity: { id: kid, publicKey: identityKey, createdAt: now },
    };
  }

  /**
   * Replaces the account's identity key. The current key and the new one both sign the
   * `rotate-identity` statement, which is the whole authority: without a session the current
   * key names the account; with one it must be the session account's current key.
   */
  async rotate(
    actor: Actor | null,
    input: {
      identityPublicKey: unknown;
      newIdentityPublicKey: unknown;
      challengeId: unknown;
      issuedAt: unknown;
      signature: unknown;
      newSignature: unknown;
      /** Identity recovery: devices of the account to revoke (lost or stolen). */
      revokeDeviceIds?: unknown;
      /** Identity recovery: a new device to add, which signs the statement too. */
      devicePublicKey?: unknown;
      deviceName?: unknown;
      deviceSignature?: unknown;
    },
  ): Promise<KeyIdentityView> {
    const session = actor && actingUser(actor);
    if (session) assertLocal(session);
    const oldKey = parsePublicKey(input.identityPublicKey, 'identityPublicKey');
    const newKey = parsePublicKey(input.newIdentityPublicKey, 'newIdentityPublicKey');
    if (oldKey === newKey)
      throw validation('the new identity key must differ from the current one');
    const revokeIds = parseRevokeDeviceIds(input.revokeDeviceIds);
    const deviceKey =
      input.devicePublicKey === undefined || input.devicePublicKey === null
        ? null
        : parsePublicKey(input.devicePublicKey, 'devicePublicKey');
    if (deviceKey !== null && (deviceKey === oldKey || deviceKey === newKey)) {
      throw validation('the device key must differ from the identity keys');
    }
    const deviceName = deviceKey === null ? null : checkDeviceName(input.deviceName);
    const extra: Array<[string, string]> = [
      ['identity', oldKey],
      ['new-identity', newKey],
    ];
    if (revokeIds.length > 0) extra.push(['revoke-devices', revokeIds.join(',')]);
    if (deviceKey !== null) extra.push(['device', deviceKey]);
    await this.challenges.verify({
      audience: 'rotate-identity',
      challengeId: input.challengeId,
      issuedAt: input.issuedAt,
      extra,
      signers: [
        { publicKey: oldKey, field: 'signature', signature: input.signature },
        { publicKey: newKey, field: 'newSignature', signature: input.newSignature },
        ...(deviceKey === null
          ? []
          : [{ publicKey: deviceKey, field: 'deviceSignature', signature: input.deviceSignature }]),
      ],
    });
    const oldId = keyIdentityId(oldKey);
    const newId_ = keyIdentityId(newKey);
    const now = this.clock.now().getTime();
    const old = await findKeyIdentity(this.db.kysely, oldId);
    const usable =
      old !== undefined &&
      old.retiredAt === null &&
      old.accountDeletedAt === null &&
      old.publicKey === oldKey;
    if (session) {
      if (!usable || old.accountId !== session.accountId) {
        throw validation("identityPublicKey is not your account's current identity key");
      }
    } else if (!usable) {
      throw unauthenticated('identityPublicKey is no current identity key on this server');
    }
    try {
      await this.db.transaction(async (tx) => {
        await lockAccount(tx.db, old.accountId, this.db.dialect);
        await this.assertIdentityFree(tx.db, newId_);
        if (!(await retireKeyIdentity(tx.db, oldId, now, newId_))) {
          throw conflict('the identity key was rotated already');
        }
        await insertKeyIdentity(tx.db, newKeyIdentityRow(newId_, old.accountId, newKey, now));
        await setAccountKeyIdentity(tx.db, old.accountId, newId_, { dropPassword: false });
        await this.recover(tx, old.accountId, revokeIds, deviceKey, deviceName, now);
      });
    } catch (err) {
      if (isUniqueViolation(err))
        throw conflict('the new identity key or device key was taken at the same moment');
      throw err;
    }
    return { id: newId_, publicKey: newKey, createdAt: now };
  }

  /**
   * Identity recovery (docs/keys.md), inside a rotation's transaction: revokes the listed devices
   * of the account, ending their sessions (`identity_recovery`), and adds the new device. An
   * account without a password keeps at least one device.
   */
  private async recover(
    tx: Tx,
    accountId: string,
    revokeIds: string[],
    deviceKey: string | null,
    deviceName: string | null,
    now: number,
  ): Promise<void> {
    for (const id of revokeIds) {
      const device = await findDeviceById(tx.db, id);
      if (!device || device.accountId !== accountId || device.revokedAt !== null) {
        throw notFound('device');
      }
      await revokeDeviceRow(tx.db, id, now);
      await this.sessions.end(tx, { deviceId: id }, 'identity_recovery');
    }
    if (deviceKey !== null) {
      await assertDeviceKeyFree(tx.db, deviceKey);
      assertDeviceRoom(
        await countActiveDevices(tx.db, accountId),
        this.config.limits.devicesPerUser,
      );
      await insertDevice(
        tx.db,
        newDeviceRow(newId(), accountId, deviceKey, deviceName!, now, null),
      );
    }
    if (revokeIds.length > 0 && (await countActiveDevices(tx.db, accountId)) === 0) {
      const account = await findAccountById(tx.db, accountId);
      if (account?.passwordHash === null) {
        throw validation(
          'recovery would leave the account with no device; add one (devicePublicKey)',
        );
      }
    }
  }

  /** The account's current identity key, or null (a password account). */
  async identityOf(actor: Actor): Promise<KeyIdentityView | null> {
    const accountId = actingAccountId(actor);
    const row = await findCurrentKeyIdentity(this.db.kysely, accountId);
    if (!row || row.publicKey === null) return null;
    return { id: row.id, publicKey: row.publicKey, createdAt: row.createdAt };
  }

  /**
   * Spends the challenge and checks a statement signed by a new identity key and its first
   * device key (signup, enrolment): `who` names the account or username it is for.
   */
  private async verifyKeyPair(
    audience: 'signup' | 'enroll-identity',
    input: {
      challengeId: unknown;
      issuedAt: unknown;
      identitySignature: unknown;
      deviceSignature: unknown;
    },
    who: readonly [string, string],
    keys: { identityKey: string; deviceKey: string },
  ): Promise<void> {
    await this.challenges.verify({
      audience,
      challengeId: input.challengeId,
      issuedAt: input.issuedAt,
      extra: [who, ['identity', keys.identityKey], ['device', keys.deviceKey]],
      signers: [
        {
          publicKey: keys.identityKey,
          field: 'identitySignature',
          signature: input.identitySignature,
        },
        { publicKey: keys.deviceKey, field: 'deviceSignature', signature: input.deviceSignature },
      ],
    });
  }

  /**
   * VALIDATION for an identity that belonged to a purged account (it can never come back),
   * CONFLICT for one some account holds or held.
   */
  private async assertIdentityFree(db: Executor, kid: string): Promise<void> {
    const existing = await findKeyIdentity(db, kid);
    if (!existing) return;
    if (existing.accountDeletedAt !== null) {
      throw validation('this key identity belonged to a deleted account and cannot be used again');
    }
    throw conflict('this key identity belongs to an account already');
  }
}

/** A new identity key of an account: current (not retired, replaced by none). */
function newKeyIdentityRow(id: string, accountId: string, publicKey: string, now: number) {
  return { id, accountId, publicKey, createdAt: now, retiredAt: null, replacedBy: null };
}
