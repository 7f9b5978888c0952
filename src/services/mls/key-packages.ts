import { createHash } from 'node:crypto';

import { actingAccountId, actingUser, type Actor } from '../../auth/actor.js';
import type { MlsKeyPackageTable } from '../../db/tables/mls.js';
import type { Tx } from '../../db/transaction.js';
import { notFound, validation } from '../../errors.js';
import { userTopic } from '../../events/catalog.js';
import { emit } from '../../events/publish.js';
import { DAY_MS } from '../../lib/clock.js';
import { isId, newId } from '../../lib/ids.js';
import { emitConversationEvent, findConversation, membersOf } from '../conversations/index.js';
import { findCurrentKeyIdentity, setKeyPackage, type DeviceView } from '../devices/index.js';

import {
  credentialIdentity,
  KEY_PACKAGE_MAX_CHARS,
  KEY_PACKAGES_LOW,
  KEY_PACKAGES_PER_CALL,
  MlsPart,
} from './mls-part.js';
import {
  claimOne,
  countAvailable,
  deleteLastResort,
  groupDevices,
  groupsOfMember,
  insertKeyPackages,
  liveDevicesOf,
  pruneKeyPackages,
} from './queries.js';
import { checkKeyPackage, decodeBase64 } from './wire.js';

export interface ClaimedKeyPackage {
  deviceId: string;
  userId: string;
  keyPackage: string;
  lastResort: boolean;
}

/** How long a claimed single-use package is kept for checking Welcomes against it. */
const CLAIMED_KEPT_MS = 7 * DAY_MS;

/** Key packages of devices: publishing, counting and claiming them (docs/e2ee.md). */
export class MlsKeyPackages extends MlsPart {
  // ---- key packages

  /**
   * Stores key packages of the calling device: single-use ones (added to its pool) and a
   * last-resort one (replacing the previous). Each must parse as an MLS KeyPackage of the
   * supported cipher suite, signed, not expired, with a basic credential naming the device's key
   * identity (`<keyIdentityId>:<deviceId>`).
   */
  async publishKeyPackages(
    actor: Actor,
    deviceId: unknown,
    input: { keyPackage?: unknown; keyPackages?: unknown; lastResortKeyPackage?: unknown },
  ): Promise<DeviceView> {
    const device = await this.deps.devices.callingDevice(actor, deviceId);
    const identity = await findCurrentKeyIdentity(this.kysely, device.accountId);
    if (!identity) throw validation('enrol an identity key before publishing key packages');
    const expected = credentialIdentity(identity.id, device.id);
    const many = input.keyPackages ?? [];
    if (!Array.isArray(many)) throw validation('keyPackages must be a list');
    const single = [
      ...(input.keyPackage !== undefined && input.keyPackage !== null ? [input.keyPackage] : []),
      ...many,
    ];
    const lastResort = input.lastResortKeyPackage ?? null;
    if (single.length === 0 && lastResort === null) {
      throw validation('pass keyPackage, keyPackages or lastResortKeyPackage');
    }
    if (single.length > KEY_PACKAGES_PER_CALL) {
      throw validation(`publish at most ${KEY_PACKAGES_PER_CALL} key packages at once`);
    }
    const now = this.now();
    const rows: MlsKeyPackageTable[] = [];
    const check = async (value: unknown, isLastResort: boolean) => {
      const bytes = decodeBase64(value, 'a key package', KEY_PACKAGE_MAX_CHARS);
      const kp = await checkKeyPackage(bytes, now);
      if (kp.identity !== expected) {
        throw validation(
          `the key package's credential must name this device's key identity: "${expected}"`,
        );
      }
      rows.push({
        id: newId(),
        deviceId: device.id,
        accountId: device.accountId,
        keyPackage: bytes.toString('base64url'),
        hash: createHash('sha256').update(bytes).digest('base64url'),
        ref: kp.ref,
        lastResort: isLastResort ? 1 : 0,
        expiresAt: kp.notAfter,
        createdAt: now,
        claimedAt: null,
        claimedBy: null,
      });
    };
    for (const v of single) await check(v, false);
    if (lastResort !== null) await check(lastResort, true);
    await this.deps.db.transaction(async (tx) => {
      if (lastResort !== null) await deleteLastResort(tx.db, device.id);
      await insertKeyPackages(tx.db, rows);
      // The device is now set up for encryption (Device.encryptionReady).
      await setKeyPackage(tx.db, device.id, rows[rows.length - 1]!.keyPackage, now);
      // A device set up for the first time (say one just linked) is not in the groups of its
      // account's encrypted conversations: their members' devices are told, to add it.
      if (device.keyPackage === null) await this.announceDevice(tx, device.accountId, now);
    });
    return this.deps.devices.deviceOf(actor, device.id);
  }

  /**
   * `MlsMembershipChanged` (`added`: the account) in each encrypted conversation with a group the
   * account is a member of: its new device is listed in `mlsGroupState.pendingAdditions` there.
   */
  private async announceDevice(tx: Tx, accountId: string, now: number): Promise<void> {
    for (const { conversationId } of await groupsOfMember(tx.db, accountId)) {
      const conv = await findConversation(tx.db, conversationId);
      if (!conv) continue;
      const members = (await membersOf(tx.db, [conv.id], now))
        .filter((m) => m.state === 'member')
        .map((m) => m.accountId);
      emitConversationEvent(tx, this.deps.events, conv, members, 'MlsMembershipChanged', now, {
        added: [accountId],
        removed: [],
      });
    }
  }

  /**
   * Deletes key packages no longer needed (the hourly job `mls-key-package-prune`): expired ones,
   * those of revoked devices, and single-use ones claimed more than 7 days ago (a Commit's Welcome
   * is checked against the packages handed out, so claimed ones are kept that long).
   */
  async prune(): Promise<number> {
    const now = this.now();
    return pruneKeyPackages(this.kysely, now, now - CLAIMED_KEPT_MS);
  }

  /** Unclaimed single-use key packages per device. */
  keyPackageCounts(deviceIds: readonly string[]): Promise<Map<string, number>> {
    return countAvailable(this.kysely, deviceIds, this.now());
  }

  /**
   * Claims one key package for each live device of `userId` not yet in the conversation's group
   * (the caller's own other devices too): single-use packages are never handed out twice; a
   * device without one left gives its last-resort package. Members only, for members.
   */
  async claimKeyPackages(
    actor: Actor,
    conversationId: unknown,
    userId: unknown,
  ): Promise<ClaimedKeyPackage[]> {
    const callerId = actingAccountId(actor);
    const conv = await this.memberConversation(callerId, conversationId);
    if (typeof userId !== 'string' || !isId(userId)) throw notFound('user');
    const now = this.now();
    const members = await membersOf(this.kysely, [conv.id], now);
    if (!members.some((m) => m.accountId === userId && m.state === 'member')) {
      throw notFound('member of this conversation');
    }
    const inGroup = new Set((await groupDevices(this.kysely, conv.id)).map((d) => d.deviceId));
    const ownDevice = actingUser(actor).deviceId;
    const devices = (await liveDevicesOf(this.kysely, userId)).filter(
      (d) => !inGroup.has(d.id) && d.id !== ownDevice,
    );
    const out: ClaimedKeyPackage[] = [];
    await this.deps.db.transaction(async (tx) => {
      const claimedSingle: string[] = [];
      for (const d of devices) {
        const kp = await claimOne(tx.db, d.id, callerId, now);
        if (!kp) continue;
        if (kp.lastResort === 0) claimedSingle.push(d.id);
        out.push({
          deviceId: d.id,
          userId,
          keyPackage: kp.keyPackage,
          lastResort: kp.lastResort === 1,
        });
      }
      const left = await countAvailable(
        tx.db,
        devices.map((d) => d.id),
        now,
      );
      for (const d of devices) {
        const remaining = left.get(d.id) ?? 0;
        if (remaining >= KEY_PACKAGES_LOW) continue;
        if (!claimedSingle.includes(d.id) && out.some((o) => o.deviceId === d.id)) continue;
        emit(tx, this.deps.events, userTopic(userId), 'MlsKeyPackagesLow', now, {
          audience: { kind: 'users', userIds: [userId] },
          serverId: conv.workspaceId,
          deviceId: d.id,
          remaining,
        });
      }
    });
    return out;
  }
}
