import { DIRECT_SPACE_ID } from '../../db/direct-space.js';
import type { Logger } from 'pino';

import { actingAccountId, type Actor } from '../../auth/actor.js';
import { assertCan, assertOutranks, can, isGuest, type Role } from '../../auth/policy.js';
import type { Config } from '../../config/index.js';
import type { Db, Executor } from '../../db/database.js';
import type { Tx } from '../../db/transaction.js';
import type { ConversationTable } from '../../db/tables/conversations.js';
import { capExceeded, conflict, notFound, validation } from '../../errors.js';
import type { EventPort } from '../../events/port.js';
import type { Audience, EventType } from '../../events/catalog.js';
import type { Clock } from '../../lib/clock.js';
import { isId, newId } from '../../lib/ids.js';
import { assertWritable, type Authz, type Membership } from '../authz/index.js';
import { keysetRows, parseKeysetArgs, type KeysetArgs } from '../paging/index.js';
import {
  emitWorkspaceEvent,
  findMember,
  findMembers,
  lockWorkspace,
  type WorkspaceService,
} from '../workspaces/index.js';

import {
  addConversationMembers,
  countChannels,
  deleteConversationMember,
  existingConversationMembers,
  findChannel,
  findChannelByName,
  findConversationMember,
  insertChannel,
  listVisibleChannels,
  toConversationView,
  updateChannel,
  type ConversationView,
} from '../conversations/index.js';

/** A channel's row, as this service reads and writes it; callers get a `ConversationView`. */
type ChannelRow = ConversationTable;

export interface CreateChannelInput {
  serverId: string;
  name: unknown;
  topic?: unknown;
  isPrivate?: boolean | null;
  /** People added at once (a private channel's first members); the creator is always in. */
  memberIds?: readonly string[] | null;
}

const CHANNEL_NAME_MAX = 80;
const TOPIC_MAX = 250;
const ADD_MAX = 100;

export interface ChannelServiceDeps {
  db: Db;
  events: EventPort;
  config: Config;
  clock: Clock;
  log: Logger;
  workspaces: WorkspaceService;
  authz: Authz;
}

/** A channel as the caller may see it, with their places in the workspace and the channel. */
interface Seen {
  channel: ChannelRow;
  membership: Membership;
  isMember: boolean;
}

/**
 * Channels of a workspace: public and private, create, rename, topic, archive, join, leave and
 * their members. Channels are conversations of kind `channel`; every answer is their view.
 */
export class ChannelService {
  constructor(private readonly deps: ChannelServiceDeps) {}

  private now(): number {
    return this.deps.clock.now().getTime();
  }

  /**
   * A channel the account can see: a member of the workspace and either in the channel or, for
   * anyone but a guest, the channel is public. NOT_FOUND otherwise (existence is never shown).
   */
  async seen(db: Executor, conversationId: string, actor: Actor): Promise<Seen> {
    const accountId = actingAccountId(actor);
    const channel = isId(conversationId) ? await findChannel(db, conversationId) : undefined;
    if (!channel) throw notFound('channel');
    const membership = await this.deps.authz.membership(actor, {
      workspaceId: channel.workspaceId,
      db,
    });
    if (!membership) throw notFound('channel');
    const isMember = !!(await findConversationMember(db, channel.id, accountId));
    if (!isMember && (channel.isPrivate === 1 || !can(membership.role, 'channel:browse'))) {
      throw notFound('channel');
    }
    return { channel, membership, isMember };
  }

  /**
   * The channels of a workspace the caller can see; archived ones on request. With `page` (the
   * API: contract, Pagination) a page of them, oldest first (creation time, then id), so a channel
   * created or renamed meanwhile never shifts a cursor; without it every one, by name.
   */
  async list(
    actor: Actor,
    serverId: string,
    opts: { includeArchived?: boolean | null; page?: KeysetArgs } = {},
  ): Promise<ConversationView[]> {
    const accountId = actingAccountId(actor);
    const page = opts.page && parseKeysetArgs(opts.page, { max: 100, default: 100 });
    const m = await this.deps.authz.requireMember(actor, { workspaceId: serverId });
    if (serverId === DIRECT_SPACE_ID) return [];
    const rows = await listVisibleChannels(this.deps.db.kysely, serverId, accountId, {
      guest: !can(m.role, 'channel:browse'),
      includeArchived: opts.includeArchived ?? false,
      ...(page && { page }),
    });
    return (page ? keysetRows(rows, page) : rows).map(toConversationView);
  }

  /** One channel the caller can see. */
  async get(actor: Actor, conversationId: string): Promise<ConversationView> {
    return toConversationView(
      (await this.seen(this.deps.db.kysely, conversationId, actor)).channel,
    );
  }

  /**
   * Creates a channel (the creator is its first member). CONFLICT for a name the workspace
   * already has, VALIDATION past SVC_LIMIT_CHANNELS_PER_WORKSPACE.
   */
  async create(actor: Actor, input: CreateChannelInput): Promise<ConversationView> {
    const accountId = actingAccountId(actor);
    const name = normalizeChannelName(input.name);
    const topic = normalizeTopic(input.topic);
    const isPrivate = input.isPrivate === true;
    const memberIds = [...new Set(input.memberIds ?? [])].filter((id) => id !== accountId);
    if (memberIds.length > ADD_MAX) throw validation(`add at most ${ADD_MAX} people at once`);
    const serverId = input.serverId;
    const id = newId();
    return this.deps.db.transaction(async (tx) => {
      const m = await this.deps.authz.requireMember(actor, { workspaceId: serverId, db: tx.db });
      if (serverId === DIRECT_SPACE_ID) {
        throw validation('the direct space has no channels: start a group conversation instead');
      }
      assertCan(m.role, isPrivate ? 'channel:createPrivate' : 'channel:create');
      this.deps.workspaces.membership.assertNotTimedOut(m);
      await lockWorkspace(tx.db, serverId);
      const cap = this.deps.config.limits.channelsPerWorkspace;
      if (cap !== null && (await countChannels(tx.db, serverId)) >= cap) {
        throw capExceeded('channels per workspace', 'SVC_LIMIT_CHANNELS_PER_WORKSPACE', cap);
      }
      if (await findChannelByName(tx.db, serverId, name)) {
        throw conflict(`this workspace already has a channel named #${name}`);
      }
      await this.checkAddable(tx.db, serverId, m.role, memberIds);
      const now = this.now();
      const row: ChannelRow = {
        id,
        workspaceId: serverId,
        kind: 'channel',
        name,
        topic,
        isPrivate: isPrivate ? 1 : 0,
        encrypted: 0,
        archivedAt: null,
        createdBy: accountId,
        createdAt: now,
        lastActivityAt: now,
      };
      await insertChannel(tx.db, row);
      await addConversationMembers(
        tx.db,
        [accountId, ...memberIds].map((a) => ({ conversationId: id, accountId: a })),
        now,
      );
      this.publish(tx, row, 'ChannelCreated', {
        name,
        topic,
        isPrivate,
        createdBy: accountId,
        memberIds: [accountId, ...memberIds],
      });
      return toConversationView(row);
    });
  }

  /** Renames a channel: staff, or a Member in it. CONFLICT for a name already taken. */
  async rename(actor: Actor, conversationId: string, name: unknown): Promise<ConversationView> {
    const newName = normalizeChannelName(name);
    return this.change(actor, conversationId, async (tx, channel) => {
      if (channel.name === newName) return null;
      const other = await findChannelByName(tx.db, channel.workspaceId, newName);
      if (other && other.id !== channel.id) {
        throw conflict(`this workspace already has a channel named #${newName}`);
      }
      return { name: newName };
    });
  }

  /** Sets or clears (empty or null) a channel's topic: staff, or a Member in it. */
  async setTopic(actor: Actor, conversationId: string, topic: unknown): Promise<ConversationView> {
    const newTopic = normalizeTopic(topic);
    return this.change(actor, conversationId, async (_tx, channel) =>
      channel.topic === newTopic ? null : { topic: newTopic },
    );
  }

  private async change(
    actor: Actor,
    conversationId: string,
    patchOf: (
      tx: Tx,
      channel: ChannelRow,
    ) => Promise<Partial<Pick<ChannelRow, 'name' | 'topic'>> | null>,
  ): Promise<ConversationView> {
    const accountId = actingAccountId(actor);
    return this.deps.db.transaction(async (tx) => {
      const { channel, membership, isMember } = await this.seen(tx.db, conversationId, actor);
      if (!isMember || !can(membership.role, 'channel:update')) {
        assertCan(membership.role, 'channel:updateAny');
      }
      this.deps.workspaces.membership.assertNotTimedOut(membership);
      assertWritable(channel);
      const patch = await patchOf(tx, channel);
      if (!patch) return toConversationView(channel);
      await updateChannel(tx.db, channel.id, patch);
      const updated = { ...channel, ...patch };
      this.publish(tx, updated, 'ChannelUpdated', { ...patch, updatedBy: accountId });
      return toConversationView(updated);
    });
  }

  /** Archives a channel (staff): read-only until unarchived. Archiving again changes nothing. */
  async archive(actor: Actor, conversationId: string): Promise<ConversationView> {
    return this.setArchived(actor, conversationId, true);
  }

  /** Unarchives a channel (staff). */
  async unarchive(actor: Actor, conversationId: string): Promise<ConversationView> {
    return this.setArchived(actor, conversationId, false);
  }

  private async setArchived(
    actor: Actor,
    conversationId: string,
    archived: boolean,
  ): Promise<ConversationView> {
    const accountId = actingAccountId(actor);
    return this.deps.db.transaction(async (tx) => {
      const { channel, membership } = await this.seen(tx.db, conversationId, actor);
      assertCan(membership.role, 'channel:archive');
      this.deps.workspaces.membership.assertNotTimedOut(membership);
      if ((channel.archivedAt !== null) === archived) return toConversationView(channel);
      const archivedAt = archived ? this.now() : null;
      await updateChannel(tx.db, channel.id, { archivedAt });
      const updated = { ...channel, archivedAt };
      this.publish(tx, updated, archived ? 'ChannelArchived' : 'ChannelUnarchived', {
        by: accountId,
      });
      return toConversationView(updated);
    });
  }

  /** Joins a public channel (not guests). Joining again changes nothing. */
  async join(actor: Actor, conversationId: string): Promise<ConversationView> {
    const accountId = actingAccountId(actor);
    return this.deps.db.transaction(async (tx) => {
      const { channel, membership, isMember } = await this.seen(tx.db, conversationId, actor);
      if (isMember) return toConversationView(channel);
      assertCan(membership.role, 'channel:join');
      this.deps.workspaces.membership.assertNotTimedOut(membership);
      assertWritable(channel);
      await addConversationMembers(tx.db, [{ conversationId: channel.id, accountId }], this.now());
      this.publish(tx, channel, 'MemberAddedToConversation', { userId: accountId, addedBy: null });
      return toConversationView(channel);
    });
  }

  /** Leaves a channel; true when the caller was in it. Allowed during a timeout. */
  async leave(actor: Actor, conversationId: string): Promise<boolean> {
    const accountId = actingAccountId(actor);
    return this.deps.db.transaction(async (tx) => {
      const { channel, isMember } = await this.seen(tx.db, conversationId, actor);
      if (!isMember) return false;
      await deleteConversationMember(tx.db, channel.id, accountId);
      this.publishRemoval(tx, channel, accountId, null);
      return true;
    });
  }

  /**
   * Adds workspace members to a channel the caller is in (staff: any channel they can see).
   * Guests can only be added by staff. NOT_FOUND for someone not in the workspace.
   */
  async addMembers(
    actor: Actor,
    conversationId: string,
    userIds: readonly string[],
  ): Promise<ConversationView> {
    const accountId = actingAccountId(actor);
    const ids = [...new Set(userIds)];
    if (ids.length === 0) throw validation('name at least one person to add');
    if (ids.length > ADD_MAX) throw validation(`add at most ${ADD_MAX} people at once`);
    return this.deps.db.transaction(async (tx) => {
      const { channel, membership, isMember } = await this.seen(tx.db, conversationId, actor);
      if (!isMember || !can(membership.role, 'channel:addMember')) {
        assertCan(membership.role, 'channel:updateAny');
      }
      this.deps.workspaces.membership.assertNotTimedOut(membership);
      assertWritable(channel);
      await this.checkAddable(tx.db, channel.workspaceId, membership.role, ids);
      const already = await existingConversationMembers(tx.db, channel.id, ids);
      const added = ids.filter((id) => !already.has(id));
      await addConversationMembers(
        tx.db,
        added.map((a) => ({ conversationId: channel.id, accountId: a })),
        this.now(),
      );
      for (const userId of added) {
        this.publish(tx, channel, 'MemberAddedToConversation', { userId, addedBy: accountId });
      }
      return toConversationView(channel);
    });
  }

  /** Removes someone the caller outranks from a channel (staff). True when they were in it. */
  async removeMember(actor: Actor, conversationId: string, userId: string): Promise<boolean> {
    const accountId = actingAccountId(actor);
    return this.deps.db.transaction(async (tx) => {
      const { channel, membership } = await this.seen(tx.db, conversationId, actor);
      assertCan(membership.role, 'channel:removeMember');
      this.deps.workspaces.membership.assertNotTimedOut(membership);
      assertWritable(channel);
      const target = isId(userId) ? await findMember(tx.db, channel.workspaceId, userId) : null;
      if (!target) throw notFound('member');
      assertOutranks(membership.role, target.role);
      if (!(await deleteConversationMember(tx.db, channel.id, userId))) return false;
      this.publishRemoval(tx, channel, userId, accountId);
      return true;
    });
  }

  /** NOT_FOUND unless every id is a workspace member; FORBIDDEN for a guest unless staff. */
  private async checkAddable(
    db: Executor,
    workspaceId: string,
    actorRole: Role,
    ids: readonly string[],
  ): Promise<void> {
    if (ids.length === 0) return;
    const rows = await findMembers(db, workspaceId, ids.filter(isId));
    if (rows.length !== ids.length) throw notFound('member');
    if (rows.some((r) => isGuest(r.role))) assertCan(actorRole, 'channel:addGuest');
  }

  private publish(
    tx: Tx,
    channel: ChannelRow,
    type: EventType,
    fields: Record<string, unknown>,
  ): void {
    const audience: Audience =
      channel.isPrivate === 1
        ? { kind: 'conversation', conversationId: channel.id }
        : { kind: 'channel', conversationId: channel.id };
    emitWorkspaceEvent(tx, this.deps.events, type, this.now(), {
      audience,
      serverId: channel.workspaceId,
      conversationId: channel.id,
      ...fields,
    });
  }

  /**
   * MemberRemovedFromConversation to the channel's audience, and (a private channel no longer
   * counting them) to the person removed.
   */
  private publishRemoval(
    tx: Tx,
    channel: ChannelRow,
    userId: string,
    removedBy: string | null,
  ): void {
    this.publish(tx, channel, 'MemberRemovedFromConversation', { userId, removedBy });
    if (channel.isPrivate === 1) {
      emitWorkspaceEvent(tx, this.deps.events, 'MemberRemovedFromConversation', this.now(), {
        audience: { kind: 'users', userIds: [userId] },
        serverId: channel.workspaceId,
        conversationId: channel.id,
        userId,
        removedBy,
      });
    }
  }
}

/**
 * A channel name as Slack writes it: lower case, no leading `#`, spaces as dashes; letters,
 * digits, `-` and `_`; 1 to 80 characters.
 */
export function normalizeChannelName(value: unknown): string {
  if (typeof value !== 'string') throw validation('name must be a string');
  const name = value.normalize('NFKC').trim().replace(/^#/, '').toLowerCase().replace(/\s+/g, '-');
  if (name.length === 0) throw validation('a channel needs a name');
  if ([...name].length > CHANNEL_NAME_MAX) {
    throw validation(`a channel name has at most ${CHANNEL_NAME_MAX} characters`);
  }
  if (!/^[\p{L}\p{N}_-]+$/u.test(name)) {
    throw validation('a channel name has only letters, digits, dashes and underscores');
  }
  return name;
}

function normalizeTopic(value: unknown): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string') throw validation('topic must be a string');
  const topic = value.normalize('NFC').trim();
  if (topic.length === 0) return null;
  if ([...topic].length > TOPIC_MAX)
    throw validation(`a topic has at most ${TOPIC_MAX} characters`);
  if (/\p{Cc}/u.test(topic)) throw validation('a topic must not contain control characters');
  return topic;
}
