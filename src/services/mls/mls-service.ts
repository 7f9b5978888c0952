import { createHash } from 'node:crypto';

import type { Logger } from 'pino';

import { actingAccountId, actingUser, type Actor } from '../../auth/actor.js';
import type { Config } from '../../config/index.js';
import type { Db } from '../../db/database.js';
import { isUniqueViolation } from '../../db/errors.js';
import type { ConversationTable, MessageTable } from '../../db/tables/collaboration.js';
import type { MlsKeyPackageTable } from '../../db/tables/mls.js';
import type { Tx } from '../../db/transaction.js';
import { AppError, forbidden, notFound, validation } from '../../errors.js';
import type { EventBus } from '../../events/bus.js';
import { userTopic } from '../../events/catalog.js';
import { emit } from '../../events/publish.js';
import type { Clock } from '../../lib/clock.js';
import { isId, newId } from '../../lib/ids.js';
import { assertReadable, plausibleId } from '../conversations/access.js';
import { emitConversationEvent, emitToUsers } from '../conversations/events.js';
import { findConversationAccess, membersOf } from '../conversations/queries.js';
import { toRow } from '../conversations/rows.js';
import type { DeviceService } from '../devices/device-service.js';
import type { DeviceView } from '../devices/device-rules.js';
import { findCurrentKeyIdentity, setKeyPackage } from '../devices/queries.js';
import type { MessageService } from '../messages/message-service.js';
import { ENCRYPTION_FRAMING_BYTES } from '../messages/sending.js';

import { FRANKING_BYTES, frankingTag } from './franking.js';
import {
  addGroupDevices,
  advanceEpoch,
  claimOne,
  commitsAfter,
  countAvailable,
  deleteLastResort,
  devicesOfRefs,
  findGroup,
  groupDevices,
  insertCommit,
  insertGroup,
  insertKeyPackages,
  insertMlsMessage,
  insertWelcomes,
  liveDevicesOf,
  memberDevices,
  mlsMessages,
  pendingRemovals,
  removeGroupDevices,
  restartGroup,
  welcomesFor,
} from './queries.js';
import { checkKeyPackage, decodeBase64, readHeader, welcomeRefs } from './wire.js';

/** Largest key package, Welcome or Commit accepted, in base64 characters. */
export const KEY_PACKAGE_MAX_CHARS = 65_536;
export const HANDSHAKE_MAX_CHARS = 1_048_576;
/** Key packages one call may publish. */
export const KEY_PACKAGES_PER_CALL = 100;
/** Below this many unclaimed single-use packages a device is told to publish more. */
export const KEY_PACKAGES_LOW = 10;
export const COMMIT_PAGE_MAX = 100;
export const WELCOME_PAGE_MAX = 100;

/** What the MLS area is built from (context.ts). */
export interface MlsServiceDeps {
  db: Db;
  bus: EventBus;
  config: Config;
  clock: Clock;
  log: Logger;
  devices: DeviceService;
  messages: MessageService;
  /** The server's franking key (services/instance/server-keys.ts). */
  frankingKey: Buffer;
}

/** The server's view of a conversation's MLS group. */
export interface MlsGroupView {
  conversationId: string;
  /** 0 while the conversation has no group yet. */
  incarnation: number;
  epoch: number;
  /** The MLS group_id the group uses (base64url): `svc:<conversationId>:<incarnation>`. */
  groupId: string;
  deviceIds: string[];
  pendingRemovalDeviceIds: string[];
  /** Every device in the group must leave it: the next incarnation may start. */
  orphaned: boolean;
}

export interface ClaimedKeyPackage {
  deviceId: string;
  userId: string;
  keyPackage: string;
  lastResort: boolean;
}

/** The MLS group_id of a conversation's group of one incarnation. */
export const groupIdOf = (conversationId: string, incarnation: number) =>
  Buffer.from(`svc:${conversationId}:${incarnation}`, 'utf8');

/** The credential identity a device's key packages must carry. */
export const credentialIdentity = (keyIdentityId: string, deviceId: string) =>
  `${keyIdentityId}:${deviceId}`;

const staleEpoch = (incarnation: number, epoch: number) =>
  new AppError(
    'STALE_EPOCH',
    `the group is at incarnation ${incarnation}, epoch ${epoch}: fetch the Commits and retry`,
    { incarnation, epoch },
  );

const commitRequired = (reason: 'noGroup' | 'pendingRemovals', message: string) =>
  new AppError('MLS_COMMIT_REQUIRED', message, { reason });

function idList(value: unknown, what: string): string[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value) || value.length > 1000) {
    throw validation(`${what} must be a list of at most 1000 device ids`);
  }
  const out = new Set<string>();
  for (const v of value) {
    if (typeof v !== 'string' || !isId(v)) throw notFound('device');
    out.add(v);
  }
  return [...out];
}

function intArg(value: unknown, what: string): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw validation(`${what} must be a whole number of at least 0`);
  }
  return value;
}

/**
 * The MLS (RFC 9420) delivery service of encrypted conversations (docs/e2ee.md): devices'
 * key packages, one group per conversation with its incarnation and epoch, Commits accepted one
 * per epoch and delivered in order with their Welcomes, and encrypted messages stored with their
 * franking tag. The server parses only what it checks and never decrypts.
 */
export class MlsService {
  constructor(private readonly deps: MlsServiceDeps) {}

  private get kysely() {
    return this.deps.db.kysely;
  }

  private now(): number {
    return this.deps.clock.now().getTime();
  }

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
    });
    return this.deps.devices.deviceOf(actor, device.id);
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
        emit(
          tx,
          this.deps.bus,
          userTopic(userId),
          'MlsKeyPackagesLow',
          {
            audience: { kind: 'users', userIds: [userId] },
            serverId: conv.workspaceId,
            deviceId: d.id,
            remaining,
          },
          now,
        );
      }
    });
    return out;
  }

  // ---- groups and Commits

  /** The conversation's group as the server knows it; members only. */
  async groupState(actor: Actor, conversationId: unknown): Promise<MlsGroupView> {
    const conv = await this.memberConversation(actingAccountId(actor), conversationId);
    return this.view(conv.id);
  }

  private async view(conversationId: string): Promise<MlsGroupView> {
    const group = await findGroup(this.kysely, conversationId);
    const incarnation = group?.incarnation ?? 0;
    const deviceIds = (await groupDevices(this.kysely, conversationId)).map((d) => d.deviceId);
    const pendingRemovalDeviceIds = await pendingRemovals(this.kysely, conversationId);
    return {
      conversationId,
      incarnation,
      epoch: group?.epoch ?? 0,
      groupId: groupIdOf(conversationId, Math.max(incarnation, 1)).toString('base64url'),
      deviceIds,
      pendingRemovalDeviceIds,
      orphaned: group !== undefined && pendingRemovalDeviceIds.length === deviceIds.length,
    };
  }

  /**
   * Accepts a Commit made in the group's current epoch, atomically with its Welcome, and moves
   * the group to the next epoch; a Commit for any other epoch answers STALE_EPOCH with the
   * current incarnation and epoch. The first Commit (incarnation 1, epoch 0) creates the group.
   * The committer declares the devices its Commit adds (each gets the Welcome) and removes.
   */
  async commit(
    actor: Actor,
    input: {
      conversationId: unknown;
      incarnation: unknown;
      epoch: unknown;
      commit: unknown;
      welcome?: unknown;
      addedDeviceIds?: unknown;
      removedDeviceIds?: unknown;
    },
  ): Promise<MlsGroupView> {
    const user = actingUser(actor);
    const conv = await this.memberConversation(user.accountId, input.conversationId);
    if (user.deviceId === null) {
      throw forbidden('commit from a device: sign in with a device key');
    }
    const incarnation = intArg(input.incarnation, 'incarnation');
    const epoch = intArg(input.epoch, 'epoch');
    const commitBytes = decodeBase64(input.commit, 'commit', HANDSHAKE_MAX_CHARS);
    const header = readHeader(commitBytes, 'the commit');
    if (header.contentType !== 'commit') {
      throw validation(`the commit carries ${header.contentType} content, not a Commit`);
    }
    if (!header.groupId.equals(groupIdOf(conv.id, Math.max(incarnation, 1)))) {
      throw validation(
        'the commit is for another MLS group than this conversation of that incarnation',
      );
    }
    if (header.epoch !== epoch) throw validation('the commit is for another epoch than `epoch`');
    const added = idList(input.addedDeviceIds, 'addedDeviceIds');
    const removed = idList(input.removedDeviceIds, 'removedDeviceIds');
    let welcome: Buffer | null = null;
    if (input.welcome !== undefined && input.welcome !== null) {
      welcome = decodeBase64(input.welcome, 'welcome', HANDSHAKE_MAX_CHARS);
      // The Welcome names each new member by the KeyPackageRef of its package: each must be a
      // package the server handed out, and together they must be the declared devices.
      const refs = welcomeRefs(welcome);
      const byRef = await devicesOfRefs(this.kysely, refs);
      const welcomed = new Set<string>();
      for (const ref of refs) {
        const deviceId = byRef.get(ref);
        if (!deviceId) {
          throw validation('the Welcome is for a key package this server did not hand out');
        }
        welcomed.add(deviceId);
      }
      if (welcomed.size !== added.length || !added.every((id) => welcomed.has(id))) {
        throw validation('addedDeviceIds must name exactly the devices the Welcome is for');
      }
    }
    if (added.length > 0 && welcome === null) {
      throw validation('a Commit that adds devices needs their Welcome');
    }
    const addable = await memberDevices(this.kysely, conv.id, added);
    if (addable.length !== added.length) {
      throw validation('only live devices of members of the conversation can be added');
    }
    const now = this.now();
    try {
      await this.deps.db.transaction(async (tx) => {
        const group = await findGroup(tx.db, conv.id, { dialect: tx.dialect, mode: 'update' });
        const roster = new Set((await groupDevices(tx.db, conv.id)).map((d) => d.deviceId));
        if (!group) {
          if (incarnation !== 1 || epoch !== 0) throw staleEpoch(0, 0);
          await insertGroup(tx.db, conv.id, now);
          await addGroupDevices(tx.db, [
            {
              conversationId: conv.id,
              deviceId: user.deviceId!,
              accountId: user.accountId,
              addedAt: now,
            },
          ]);
          roster.add(user.deviceId!);
        } else if (
          incarnation === group.incarnation + 1 &&
          epoch === 0 &&
          (await pendingRemovals(tx.db, conv.id)).length === roster.size
        ) {
          // Every device in the group must leave it, so nobody can commit there any more: a
          // member's device starts the next incarnation, a new group, as at creation.
          await restartGroup(tx.db, conv.id, incarnation, now);
          await removeGroupDevices(tx.db, conv.id, [...roster]);
          roster.clear();
          await addGroupDevices(tx.db, [
            {
              conversationId: conv.id,
              deviceId: user.deviceId!,
              accountId: user.accountId,
              addedAt: now,
            },
          ]);
          roster.add(user.deviceId!);
        } else {
          if (group.incarnation !== incarnation || group.epoch !== epoch) {
            throw staleEpoch(group.incarnation, group.epoch);
          }
          if (!roster.has(user.deviceId!)) {
            throw forbidden('this device is not in the group: join it with its Welcome first');
          }
          if (!(await advanceEpoch(tx.db, conv.id, incarnation, epoch, now))) {
            throw staleEpoch(group.incarnation, group.epoch + 1);
          }
        }
        for (const id of removed) {
          if (!roster.has(id)) throw validation(`device ${id} is not in the group`);
        }
        for (const id of added) {
          if (roster.has(id)) throw validation(`device ${id} is in the group already`);
        }
        await insertCommit(tx.db, {
          conversationId: conv.id,
          incarnation,
          epoch,
          commit: commitBytes.toString('base64url'),
          senderId: user.accountId,
          senderDeviceId: user.deviceId,
          createdAt: now,
        });
        await removeGroupDevices(tx.db, conv.id, removed);
        await addGroupDevices(
          tx.db,
          addable.map((d) => ({
            conversationId: conv.id,
            deviceId: d.id,
            accountId: d.accountId,
            addedAt: now,
          })),
        );
        await insertWelcomes(
          tx.db,
          addable.map((d) => ({
            id: newId(),
            conversationId: conv.id,
            deviceId: d.id,
            incarnation,
            epoch: epoch + 1,
            welcome: welcome!.toString('base64url'),
            createdAt: now,
          })),
        );
        const members = (await membersOf(tx.db, [conv.id], now))
          .filter((m) => m.state === 'member')
          .map((m) => m.accountId);
        emitConversationEvent(tx, this.deps.bus, conv, members, 'MlsCommitAdded', now, {
          incarnation,
          epoch,
          commit: commitBytes.toString('base64url'),
          committedBy: user.accountId,
          deviceId: user.deviceId,
          addedDeviceIds: added,
          removedDeviceIds: removed,
        });
        if (addable.length > 0) {
          emitToUsers(
            tx,
            this.deps.bus,
            conv,
            [...new Set(addable.map((d) => d.accountId))],
            'MlsWelcomeAvailable',
            now,
            { incarnation, epoch: epoch + 1, deviceIds: added },
          );
        }
      });
    } catch (err) {
      // Two first Commits at once on PostgreSQL: the loser's insert of the group or of the
      // Commit fails on its key. It is a stale epoch like any lost race.
      if (!isUniqueViolation(err)) throw err;
      const group = await findGroup(this.kysely, conv.id);
      throw staleEpoch(group?.incarnation ?? 0, group?.epoch ?? 0);
    }
    return this.view(conv.id);
  }

  /** Commits of one incarnation from `fromEpoch` on, in epoch order; members only. */
  async commits(
    actor: Actor,
    conversationId: unknown,
    args: { incarnation: unknown; fromEpoch: unknown; limit?: unknown },
  ) {
    const conv = await this.memberConversation(actingAccountId(actor), conversationId);
    const incarnation = intArg(args.incarnation, 'incarnation');
    const fromEpoch = intArg(args.fromEpoch, 'fromEpoch');
    const limit = args.limit ?? 50;
    if (
      typeof limit !== 'number' ||
      !Number.isInteger(limit) ||
      limit < 1 ||
      limit > COMMIT_PAGE_MAX
    ) {
      throw validation(`limit must be a whole number from 1 to ${COMMIT_PAGE_MAX}`);
    }
    const rows = await commitsAfter(this.kysely, conv.id, incarnation, fromEpoch, limit + 1);
    const items = rows.slice(0, limit);
    const last = items[items.length - 1];
    return {
      items,
      hasMore: rows.length > limit,
      nextEpoch: last ? last.epoch + 1 : fromEpoch,
    };
  }

  /** Welcomes for the calling device, oldest first. */
  async welcomes(
    actor: Actor,
    args: { conversationId?: unknown; after?: unknown; limit?: unknown },
  ) {
    const user = actingUser(actor);
    if (user.deviceId === null) {
      throw forbidden('Welcomes are for a device: sign in with a device key');
    }
    const conversationId =
      args.conversationId === undefined || args.conversationId === null
        ? null
        : plausibleId(args.conversationId)
          ? args.conversationId
          : null;
    const after = typeof args.after === 'string' && isId(args.after) ? args.after : null;
    const limit = args.limit ?? WELCOME_PAGE_MAX;
    if (
      typeof limit !== 'number' ||
      !Number.isInteger(limit) ||
      limit < 1 ||
      limit > WELCOME_PAGE_MAX
    ) {
      throw validation(`limit must be a whole number from 1 to ${WELCOME_PAGE_MAX}`);
    }
    return welcomesFor(this.kysely, user.deviceId, { conversationId, afterId: after, limit });
  }

  // ---- encrypted messages

  /**
   * Stores an MLS application message (a PrivateMessage of the group's current epoch) with the
   * sender's franking commitment, and binds the commitment to sender, conversation and time with
   * the franking key. MLS_COMMIT_REQUIRED before the group exists (`noGroup`) and while devices
   * that must leave are still in it (`pendingRemovals`); STALE_EPOCH for another epoch.
   */
  async sendEncrypted(
    actor: Actor,
    input: {
      conversationId: unknown;
      incarnation: unknown;
      epoch: unknown;
      ciphertext: unknown;
      frankingCommitment: unknown;
      threadRootId?: unknown;
    },
  ): Promise<MessageTable> {
    const user = actingUser(actor);
    const incarnation = intArg(input.incarnation, 'incarnation');
    const epoch = intArg(input.epoch, 'epoch');
    const max = this.deps.config.messageBytesMax + ENCRYPTION_FRAMING_BYTES;
    const chars = Math.ceil((max * 4) / 3) + 4;
    if (typeof input.ciphertext === 'string' && input.ciphertext.length > chars) {
      throw validation(
        `an encrypted message is at most ${max} bytes (SVC_LIMIT_MESSAGE_BYTES plus ${ENCRYPTION_FRAMING_BYTES} bytes of framing)`,
      );
    }
    const bytes = decodeBase64(input.ciphertext, 'ciphertext', chars);
    const commitment = decodeBase64(input.frankingCommitment, 'frankingCommitment', 64);
    if (commitment.length !== FRANKING_BYTES) {
      throw validation(`frankingCommitment must be ${FRANKING_BYTES} bytes`);
    }
    const header = readHeader(bytes, 'the ciphertext');
    if (header.wire !== 'private' || header.contentType !== 'application') {
      throw validation('the ciphertext must be an MLS PrivateMessage with application content');
    }
    if (header.epoch !== epoch)
      throw validation('the ciphertext is for another epoch than `epoch`');
    const check = async (tx: Tx | null, conv: Pick<ConversationTable, 'id'>) => {
      const db = tx ? tx.db : this.kysely;
      // Inside the storing transaction the group is held, so no Commit moves the epoch before
      // the message is stored.
      const group = await findGroup(
        db,
        conv.id,
        tx ? { dialect: tx.dialect, mode: 'share' } : undefined,
      );
      if (!group) {
        throw commitRequired(
          'noGroup',
          'the conversation has no MLS group yet: create it with a Commit',
        );
      }
      const pending = await pendingRemovals(db, conv.id);
      if (pending.length > 0) {
        throw commitRequired(
          'pendingRemovals',
          `devices that left must be removed from the group by a Commit first: ${pending.join(', ')}`,
        );
      }
      if (group.incarnation !== incarnation || group.epoch !== epoch) {
        throw staleEpoch(group.incarnation, group.epoch);
      }
      if (!header.groupId.equals(groupIdOf(conv.id, incarnation))) {
        throw validation('the ciphertext is for another MLS group than this conversation');
      }
    };
    return this.deps.messages.sendEncrypted(
      actor,
      { conversationId: input.conversationId, threadRootId: input.threadRootId },
      { text: bytes.toString('base64url'), bytes: bytes.length },
      {
        before: (conv) => check(null, conv),
        within: async (tx, message) => {
          await check(tx, { id: message.conversationId });
          const tag = frankingTag(this.deps.frankingKey, {
            messageId: message.id,
            conversationId: message.conversationId,
            authorId: message.authorId,
            createdAt: message.createdAt,
            commitment,
          });
          const mls = {
            incarnation,
            epoch,
            senderDeviceId: user.deviceId,
            frankingCommitment: commitment.toString('base64url'),
            frankingTag: tag.toString('base64url'),
          };
          await insertMlsMessage(tx.db, { messageId: message.id, ...mls });
          return { mls };
        },
      },
    );
  }

  /** The MLS fields of encrypted messages, by message id. */
  async messageInfo(messageIds: readonly string[]) {
    const rows = await mlsMessages(this.kysely, messageIds);
    return new Map(rows.map((r) => [r.messageId, r]));
  }

  /** An encrypted conversation the caller is a member of (NOT_FOUND / FORBIDDEN as reading). */
  private async memberConversation(accountId: string, conversationId: unknown) {
    if (!plausibleId(conversationId)) throw notFound('conversation');
    const row = await findConversationAccess(this.kysely, conversationId, accountId);
    const access = assertReadable(row, this.now());
    if (!access.isMember) throw forbidden('only members take part in the conversation’s group');
    const conv = toRow(access.row);
    if (conv.encrypted !== 1) throw validation('this conversation is not end-to-end encrypted');
    return conv;
  }
}
