import { actingAccountId, actingUser, type Actor } from '../../auth/actor.js';
import { isUniqueViolation } from '../../db/errors.js';
import { forbidden, validation } from '../../errors.js';
import { isId, newId } from '../../lib/ids.js';
import {
  plausibleId,
  emitConversationEvent,
  emitToUsers,
  membersOf,
} from '../conversations/index.js';

import {
  COMMIT_PAGE_MAX,
  groupIdOf,
  HANDSHAKE_MAX_CHARS,
  idList,
  intArg,
  MlsPart,
  pageLimit,
  staleEpoch,
  WELCOME_PAGE_MAX,
} from './mls-part.js';
import {
  addGroupDevices,
  advanceEpoch,
  commitsAfter,
  devicesOfRefs,
  findGroup,
  groupDevices,
  insertCommit,
  insertGroup,
  insertWelcomes,
  memberDevices,
  pendingAdditions,
  pendingRemovals,
  removeGroupDevices,
  restartGroup,
  welcomesFor,
} from './queries.js';
import { decodeBase64, readHeader, welcomeRefs } from './wire.js';

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
  /** Members' devices set up for encryption and not in the group yet. */
  pendingAdditions: Array<{ deviceId: string; userId: string }>;
  /** Every device in the group must leave it: the next incarnation may start. */
  orphaned: boolean;
}

/** Groups, their Commits and Welcomes, in epoch order (docs/e2ee.md). */
export class MlsGroups extends MlsPart {
  // ---- groups and Commits

  /** The conversation's group as the server knows it; members only. */
  async groupState(actor: Actor, conversationId: unknown): Promise<MlsGroupView> {
    const conv = await this.memberConversation(actingAccountId(actor), conversationId);
    return this.view(conv.id);
  }

  async view(conversationId: string): Promise<MlsGroupView> {
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
      pendingAdditions: group ? await pendingAdditions(this.kysely, conversationId) : [],
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
        // A new group (the first, or the next incarnation) starts with the committing device.
        const seatCommitter = async () => {
          const committer = user.deviceId!;
          await addGroupDevices(tx.db, [
            {
              conversationId: conv.id,
              deviceId: committer,
              accountId: user.accountId,
              addedAt: now,
            },
          ]);
          roster.add(committer);
        };
        if (!group) {
          if (incarnation !== 1 || epoch !== 0) throw staleEpoch(0, 0);
          await insertGroup(tx.db, conv.id, now);
          await seatCommitter();
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
          await seatCommitter();
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
        emitConversationEvent(tx, this.deps.events, conv, members, 'MlsCommitAdded', now, {
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
            this.deps.events,
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
    const limit = pageLimit(args.limit, 50, COMMIT_PAGE_MAX);
    const rows = await commitsAfter(this.kysely, conv.id, incarnation, fromEpoch, limit + 1);
    const items = rows.slice(0, limit).map((r) => ({
      incarnation: r.incarnation,
      epoch: r.epoch,
      commit: r.commit,
      committedBy: r.senderId,
      deviceId: r.senderDeviceId,
      createdAt: r.createdAt,
    }));
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
    args: { conversationId?: unknown; after?: unknown; before?: unknown; limit?: unknown },
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
    const cursor = (name: 'after' | 'before') => {
      const value = args[name];
      if (value === undefined || value === null) return null;
      if (typeof value !== 'string' || !isId(value)) {
        throw validation(`${name} must be the id of a Welcome of this list`);
      }
      return value;
    };
    const after = cursor('after');
    const before = cursor('before');
    if (after && before) throw validation('pass at most one of after and before');
    const limit = pageLimit(args.limit, WELCOME_PAGE_MAX, WELCOME_PAGE_MAX);
    return welcomesFor(this.kysely, user.deviceId, {
      conversationId,
      afterId: after,
      beforeId: before,
      limit,
    });
  }
}
