import type { Logger } from 'pino';

import { assertCan, assertOutranks, can, type Role } from '../../auth/policy.js';
import type { Config } from '../../config/index.js';
import type { Db, Executor } from '../../db/database.js';
import { DIRECT_SPACE_ID } from '../../db/direct-space.js';
import type { Tx } from '../../db/transaction.js';
import { AppError, capExceeded, notFound, validation } from '../../errors.js';
import type { EventBus } from '../../events/bus.js';
import { MINUTE_MS, type Clock } from '../../lib/clock.js';
import { decodeCursor, encodeCursor } from '../../lib/cursor.js';
import { newId, isId } from '../../lib/ids.js';
import type { AccountService, AccountView } from '../accounts/account-service.js';
import {
  addConversationMembers,
  findChannelsIn,
  insertChannel,
  listOpenPublicChannelIds,
} from '../channels/queries.js';
import { lockAccount } from '../accounts/queries.js';

import { emit, iso } from './events.js';
import {
  countMembers,
  countOwnedWorkspaces,
  deleteMember,
  deleteWorkspaceRow,
  findMember,
  findWorkspace,
  findWorkspaceFor,
  insertMember,
  insertWorkspace,
  listMemberIds,
  listMembersPage,
  listWorkspacesOf,
  lockWorkspace,
  setMemberRole,
  setMemberTimeout,
  updateWorkspace,
  type MemberPageRow,
} from './queries.js';
import { assertNotTimedOut, type Membership } from './rules.js';
import { checkDescription, checkName, toMemberView, toView } from './views.js';

export { DIRECT_SPACE_ID };
export type { Membership };

/** A workspace as the caller sees it. */
export interface WorkspaceView {
  id: string;
  name: string;
  description: string | null;
  ownerId: string | null;
  isDirect: boolean;
  createdAt: number;
  updatedAt: number;
  /** The caller's role; null in the direct space. */
  myRole: Role | null;
  myTimedOutUntil: number | null;
  memberCount: number;
}

/** One member of a workspace. */
export interface WorkspaceMemberView {
  serverId: string;
  user: AccountView;
  role: Role;
  joinedAt: number;
  timedOutUntil: number | null;
}

export interface MemberPage {
  items: WorkspaceMemberView[];
  nextCursor: string | null;
  prevCursor: string | null;
}

/** Work another area does inside the transaction that deletes a workspace (its own rows). */
export type WorkspaceDeletionHook = (tx: Tx, workspaceId: string) => Promise<void>;

/** The default channels of a new workspace, in order; the channel cap may cut the list. */
export const DEFAULT_CHANNELS = [
  { name: 'general', topic: 'Announcements and work for the whole workspace' },
  { name: 'random', topic: 'Everything else' },
] as const;

/** The longest timeout: 28 days, as Discord allows. */
export const TIMEOUT_MAX_MINUTES = 28 * 24 * 60;
const MEMBER_PAGE_MAX = 200;

export interface WorkspaceServiceDeps {
  db: Db;
  bus: EventBus;
  config: Config;
  clock: Clock;
  log: Logger;
  accounts: AccountService;
}

/**
 * Workspaces, their members and roles: creation, settings, hand-over, deletion, leaving,
 * removal and timeouts. Other areas call `membership`, `requireMember`, `requireWriter` and
 * `assertNotTimedOut` to guard their writes, and `joinAsMember` to add someone (signups).
 */
export class WorkspaceService {
  private readonly deletionHooks: WorkspaceDeletionHook[] = [];

  constructor(private readonly deps: WorkspaceServiceDeps) {}

  private get kysely() {
    return this.deps.db.kysely;
  }

  private now(): number {
    return this.deps.clock.now().getTime();
  }

  // ---- Membership checks other areas call -------------------------------------------------

  /**
   * The account's role and timeout in a workspace, or null when not a member (or no such
   * workspace). In the direct space every account is a plain member without a timeout.
   */
  async membership(
    workspaceId: string,
    accountId: string,
    db: Executor = this.kysely,
  ): Promise<Membership | null> {
    if (workspaceId === DIRECT_SPACE_ID) return { role: 'member', timedOutUntil: null };
    if (!isId(workspaceId)) return null;
    const row = await findMember(db, workspaceId, accountId);
    return row ? { role: row.role, timedOutUntil: row.timedOutUntil } : null;
  }

  /** The membership, or NOT_FOUND (the workspace's existence is never revealed). */
  async requireMember(
    workspaceId: string,
    accountId: string,
    db: Executor = this.kysely,
  ): Promise<Membership> {
    const m = await this.membership(workspaceId, accountId, db);
    if (!m) throw notFound('workspace');
    return m;
  }

  /** TIMED_OUT with `until` (RFC 3339) while the membership's timeout runs. */
  assertNotTimedOut(membership: Pick<Membership, 'timedOutUntil'>): void {
    assertNotTimedOut(membership, this.now());
  }

  /** A member who may write now: NOT_FOUND for a non-member, TIMED_OUT during a timeout. */
  async requireWriter(
    workspaceId: string,
    accountId: string,
    db: Executor = this.kysely,
  ): Promise<Membership> {
    const m = await this.requireMember(workspaceId, accountId, db);
    this.assertNotTimedOut(m);
    return m;
  }

  /** Registers work to run inside the transaction that deletes a workspace. */
  onDelete(hook: WorkspaceDeletionHook): void {
    this.deletionHooks.push(hook);
  }

  /**
   * Makes an account a Member with the workspace's public channels (signups to
   * SVC_DEFAULT_WORKSPACE). Joining again changes nothing. NOT_FOUND for no such workspace,
   * VALIDATION for the direct space and past SVC_LIMIT_MEMBERS_PER_WORKSPACE.
   */
  async joinAsMember(tx: Tx, workspaceId: string, accountId: string): Promise<{ joined: boolean }> {
    if (workspaceId === DIRECT_SPACE_ID || !isId(workspaceId)) {
      this.deps.log.warn({ workspaceId }, 'joinAsMember: not a workspace one can join; skipped');
      return { joined: false };
    }
    if (!(await findWorkspace(tx.db, workspaceId))) {
      this.deps.log.warn({ workspaceId }, 'joinAsMember: no such workspace; skipped');
      return { joined: false };
    }
    return this.addMember(tx, workspaceId, accountId, { role: 'member' });
  }

  /**
   * Adds a person as `member` (with every open public channel) or `guest` (with the given
   * channels only), under the member cap. Used by joining with an invite and by signups.
   */
  async addMember(
    tx: Tx,
    workspaceId: string,
    accountId: string,
    opts: { role: 'member' | 'guest'; channelIds?: readonly string[]; inviteId?: string },
  ): Promise<{ joined: boolean }> {
    if (workspaceId === DIRECT_SPACE_ID) {
      throw validation('the direct space has no members to join');
    }
    if (!isId(workspaceId) || !(await lockWorkspace(tx.db, workspaceId))) {
      throw notFound('workspace');
    }
    if (await findMember(tx.db, workspaceId, accountId)) return { joined: false };
    const cap = this.deps.config.limits.membersPerWorkspace;
    if (cap !== null && (await countMembers(tx.db, workspaceId)) >= cap) {
      throw capExceeded('members per workspace', 'SVC_LIMIT_MEMBERS_PER_WORKSPACE', cap);
    }
    const now = this.now();
    await insertMember(tx.db, {
      workspaceId,
      accountId,
      role: opts.role,
      joinedAt: now,
      timedOutUntil: null,
    });
    const channelIds =
      opts.role === 'member'
        ? await listOpenPublicChannelIds(tx.db, workspaceId)
        : (await findChannelsIn(tx.db, workspaceId, opts.channelIds ?? []))
            .filter((c) => c.archivedAt === null)
            .map((c) => c.id);
    await addConversationMembers(
      tx.db,
      channelIds.map((conversationId) => ({ conversationId, accountId })),
      now,
    );
    emit(tx, this.deps.bus, now, 'MemberJoined', {
      audience: { kind: 'workspace' },
      serverId: workspaceId,
      userId: accountId,
      role: opts.role,
      channelIds,
      inviteId: opts.inviteId ?? null,
    });
    return { joined: true };
  }

  // ---- Reading ------------------------------------------------------------------------------

  /** One workspace the caller belongs to (or the direct space); NOT_FOUND otherwise. */
  async get(accountId: string, workspaceId: string): Promise<WorkspaceView> {
    if (!isId(workspaceId)) throw notFound('workspace');
    const row = await findWorkspaceFor(this.kysely, workspaceId, accountId);
    if (!row) throw notFound('workspace');
    if (row.isDirect !== 1 && row.myRole === null) throw notFound('workspace');
    return toView(row);
  }

  /** The direct space first, then the caller's workspaces in the order joined. */
  async listMine(accountId: string): Promise<WorkspaceView[]> {
    const [direct, rows] = await Promise.all([
      findWorkspaceFor(this.kysely, DIRECT_SPACE_ID, accountId),
      listWorkspacesOf(this.kysely, accountId),
    ]);
    return [...(direct ? [toView(direct)] : []), ...rows.map(toView)];
  }

  /**
   * A page of members in the order they joined. Guests see only themselves (Slack's guests
   * cannot browse the directory); the direct space has no member list (VALIDATION).
   */
  async membersPage(
    accountId: string,
    workspaceId: string,
    args: { after?: string | null; before?: string | null; limit?: number | null },
  ): Promise<MemberPage> {
    const m = await this.requireMember(workspaceId, accountId);
    if (workspaceId === DIRECT_SPACE_ID) {
      throw validation('the direct space has no member list');
    }
    if (args.after && args.before) throw validation('pass at most one of after and before');
    const limit = args.limit ?? 50;
    if (!Number.isInteger(limit) || limit < 1 || limit > MEMBER_PAGE_MAX) {
      throw validation(`limit must be between 1 and ${MEMBER_PAGE_MAX}`);
    }
    const after = args.after ? decodeCursor(args.after) : undefined;
    const before = args.before ? decodeCursor(args.before) : undefined;
    // Guests cannot browse the directory: their list holds only themself, wherever they joined.
    let rows = await listMembersPage(this.kysely, workspaceId, {
      after,
      before,
      limit,
      ...(can(m.role, 'member:list') ? {} : { onlyAccountId: accountId }),
    });
    const more = rows.length > limit;
    rows = rows.slice(0, limit);
    if (before) rows.reverse();
    const items = rows.map((r) => toMemberView(workspaceId, r));
    const first = rows[0];
    const last = rows[rows.length - 1];
    const cursorOf = (r: MemberPageRow | undefined) =>
      r ? encodeCursor({ at: r.joinedAt, id: r.accountId }) : null;
    // nextCursor continues in the direction asked; prevCursor goes back the other way.
    if (before) {
      return {
        items,
        nextCursor: more ? cursorOf(first) : null,
        prevCursor: cursorOf(last),
      };
    }
    return {
      items,
      nextCursor: more ? cursorOf(last) : null,
      prevCursor: after ? cursorOf(first) : null,
    };
  }

  /** One member of a workspace the caller belongs to; NOT_FOUND otherwise. */
  async member(
    accountId: string,
    workspaceId: string,
    userId: string,
  ): Promise<WorkspaceMemberView> {
    await this.requireMember(workspaceId, accountId);
    const row = await findMember(this.kysely, workspaceId, userId);
    if (!row || workspaceId === DIRECT_SPACE_ID) throw notFound('member');
    return {
      serverId: workspaceId,
      user: await this.deps.accounts.get(userId),
      role: row.role,
      joinedAt: row.joinedAt,
      timedOutUntil: row.timedOutUntil,
    };
  }

  // ---- Creating and changing ----------------------------------------------------------------

  /**
   * Creates a workspace owned by the caller, with #general and #random as far as the channel
   * cap allows. Refused during probation and past SVC_LIMIT_WORKSPACES_PER_USER (VALIDATION).
   */
  async create(
    accountId: string,
    input: { name: unknown; description?: unknown },
  ): Promise<WorkspaceView> {
    const name = checkName(input.name);
    const description = checkDescription(input.description);
    const account = await this.deps.accounts.get(accountId);
    const probationEnds = this.deps.accounts.probationEndsAt(account.createdAt);
    const now = this.now();
    if (probationEnds !== null) {
      const minutes = Math.ceil((probationEnds - now) / MINUTE_MS);
      throw validation(
        `new accounts cannot create a workspace during probation; you can in ${minutes} minute${minutes === 1 ? '' : 's'} (${new Date(probationEnds).toISOString()})`,
        { probationEndsAt: new Date(probationEnds).toISOString(), minutes },
      );
    }
    const id = newId();
    await this.deps.db.transaction(async (tx) => {
      await lockAccount(tx.db, accountId);
      const cap = this.deps.config.limits.workspacesPerUser;
      if (cap !== null && (await countOwnedWorkspaces(tx.db, accountId)) >= cap) {
        throw capExceeded('workspaces per user', 'SVC_LIMIT_WORKSPACES_PER_USER', cap);
      }
      await insertWorkspace(tx.db, {
        id,
        name,
        description,
        ownerId: accountId,
        isDirect: 0,
        createdAt: now,
        updatedAt: now,
      });
      await insertMember(tx.db, {
        workspaceId: id,
        accountId,
        role: 'owner',
        joinedAt: now,
        timedOutUntil: null,
      });
      const channelCap = this.deps.config.limits.channelsPerWorkspace;
      const defaults = DEFAULT_CHANNELS.slice(0, channelCap ?? DEFAULT_CHANNELS.length);
      for (const c of defaults) {
        const channelId = newId();
        await insertChannel(tx.db, {
          id: channelId,
          workspaceId: id,
          kind: 'channel',
          name: c.name,
          topic: c.topic,
          isPrivate: 0,
          encrypted: 0,
          archivedAt: null,
          createdBy: accountId,
          createdAt: now,
          lastActivityAt: now,
        });
        await addConversationMembers(tx.db, [{ conversationId: channelId, accountId }], now);
      }
    });
    return this.get(accountId, id);
  }

  /** Renames or describes a workspace (owner and Moderators). */
  async update(
    accountId: string,
    workspaceId: string,
    input: { name?: unknown; description?: unknown },
  ): Promise<WorkspaceView> {
    await this.deps.db.transaction(async (tx) => {
      const m = await this.requireMember(workspaceId, accountId, tx.db);
      this.refuseDirect(workspaceId, 'renamed or described');
      assertCan(m.role, 'workspace:update');
      this.assertNotTimedOut(m);
      const patch: { name?: string; description?: string | null; updatedAt: number } = {
        updatedAt: this.now(),
      };
      if (input.name !== undefined && input.name !== null) patch.name = checkName(input.name);
      if (input.description !== undefined) patch.description = checkDescription(input.description);
      await updateWorkspace(tx.db, workspaceId, patch);
      emit(tx, this.deps.bus, patch.updatedAt, 'WorkspaceUpdated', {
        audience: { kind: 'workspace' },
        serverId: workspaceId,
        updatedBy: accountId,
        ...(patch.name !== undefined ? { name: patch.name } : {}),
        ...(patch.description !== undefined ? { description: patch.description } : {}),
      });
    });
    return this.get(accountId, workspaceId);
  }

  /**
   * Changes a member's role. Never grants owner (VALIDATION: use transferWorkspaceOwnership).
   * The caller must outrank both the member's current role and the role given.
   */
  async setMemberRole(
    accountId: string,
    workspaceId: string,
    userId: string,
    role: Role,
  ): Promise<WorkspaceMemberView> {
    await this.deps.db.transaction(async (tx) => {
      const m = await this.requireMember(workspaceId, accountId, tx.db);
      this.refuseDirect(workspaceId, 'given roles');
      if (role === 'owner') {
        throw validation(
          'setMemberRole never grants the owner role; use transferWorkspaceOwnership',
        );
      }
      assertCan(m.role, 'member:setRole');
      this.assertNotTimedOut(m);
      const target = await findMember(tx.db, workspaceId, userId);
      if (!target) throw notFound('member');
      assertOutranks(m.role, target.role);
      assertOutranks(m.role, role);
      if (target.role === role) return;
      await setMemberRole(tx.db, workspaceId, userId, role);
      emit(tx, this.deps.bus, this.now(), 'MemberRoleChanged', {
        audience: { kind: 'workspace' },
        serverId: workspaceId,
        userId,
        role,
        previousRole: target.role,
        changedBy: accountId,
      });
    });
    return this.member(accountId, workspaceId, userId);
  }

  /**
   * Hands the workspace to another member in one step: they become owner, the caller a
   * Moderator; both changes are announced with MemberRoleChanged.
   */
  async transferOwnership(
    accountId: string,
    workspaceId: string,
    userId: string,
  ): Promise<WorkspaceView> {
    await this.deps.db.transaction(async (tx) => {
      const m = await this.requireMember(workspaceId, accountId, tx.db);
      this.refuseDirect(workspaceId, 'handed over');
      assertCan(m.role, 'workspace:transfer');
      await lockWorkspace(tx.db, workspaceId);
      if (userId === accountId) throw validation('you already own this workspace');
      const target = isId(userId) ? await findMember(tx.db, workspaceId, userId) : undefined;
      if (!target) throw notFound('member');
      if (target.role === 'guest') {
        throw validation('a guest cannot own a workspace; make them a Member first');
      }
      const now = this.now();
      await setMemberRole(tx.db, workspaceId, userId, 'owner');
      await setMemberRole(tx.db, workspaceId, accountId, 'moderator');
      // An owner cannot be timed out: nobody outranks them.
      await setMemberTimeout(tx.db, workspaceId, userId, null);
      await updateWorkspace(tx.db, workspaceId, { ownerId: userId, updatedAt: now });
      for (const change of [
        { userId, role: 'owner', previousRole: target.role },
        { userId: accountId, role: 'moderator', previousRole: 'owner' },
      ]) {
        emit(tx, this.deps.bus, now, 'MemberRoleChanged', {
          audience: { kind: 'workspace' },
          serverId: workspaceId,
          ...change,
          changedBy: accountId,
        });
      }
    });
    return this.get(accountId, workspaceId);
  }

  /**
   * Deletes a workspace for good (owner only; `confirmName` must equal its name). Every member
   * gets MemberLeft for themself; then WorkspaceDeleted ends the workspace's streams.
   */
  async delete(accountId: string, workspaceId: string, confirmName: unknown): Promise<boolean> {
    await this.deps.db.transaction(async (tx) => {
      const m = await this.requireMember(workspaceId, accountId, tx.db);
      this.refuseDirect(workspaceId, 'deleted');
      assertCan(m.role, 'workspace:delete');
      const ws = await findWorkspace(tx.db, workspaceId);
      if (!ws) throw notFound('workspace');
      if (typeof confirmName !== 'string' || confirmName !== ws.name) {
        throw validation('confirmName must equal the name of the workspace');
      }
      await this.deleteWithin(tx, workspaceId, accountId);
    });
    return true;
  }

  /**
   * Deletes a workspace inside the caller's transaction without the owner's checks: the account
   * purge removes a workspace its account alone belonged to, a cascading principal block those
   * its accounts own (`by`, the operator). The direct space is never deleted.
   */
  async deleteForPurge(tx: Tx, workspaceId: string, by: string | null = null): Promise<void> {
    if (workspaceId === DIRECT_SPACE_ID) return;
    await this.deleteWithin(tx, workspaceId, by);
  }

  private async deleteWithin(tx: Tx, workspaceId: string, by: string | null): Promise<void> {
    await lockWorkspace(tx.db, workspaceId);
    const memberIds = await listMemberIds(tx.db, workspaceId);
    for (const hook of this.deletionHooks) await hook(tx, workspaceId);
    await deleteWorkspaceRow(tx.db, workspaceId);
    const now = this.now();
    for (const userId of memberIds) {
      emit(tx, this.deps.bus, now, 'MemberLeft', {
        audience: { kind: 'users', userIds: [userId] },
        serverId: workspaceId,
        userId,
        reason: 'workspaceDeleted',
      });
    }
    emit(tx, this.deps.bus, now, 'WorkspaceDeleted', {
      audience: { kind: 'users', userIds: memberIds },
      serverId: workspaceId,
      deletedBy: by,
    });
  }

  /** Leaves a workspace; the owner must hand it over first (VALIDATION). */
  async leave(accountId: string, workspaceId: string): Promise<boolean> {
    await this.deps.db.transaction(async (tx) => {
      const m = await this.requireMember(workspaceId, accountId, tx.db);
      this.refuseDirect(workspaceId, 'left');
      if (m.role === 'owner') {
        throw validation(
          'the owner cannot leave; hand the workspace over with transferWorkspaceOwnership, or delete it',
        );
      }
      assertCan(m.role, 'workspace:leave');
      await lockWorkspace(tx.db, workspaceId);
      await deleteMember(tx.db, workspaceId, accountId);
      emit(tx, this.deps.bus, this.now(), 'MemberLeft', {
        audience: { kind: 'workspace' },
        serverId: workspaceId,
        userId: accountId,
        reason: 'left',
      });
    });
    return true;
  }

  /** Removes someone the caller outranks (owner and Moderators). */
  async removeMember(accountId: string, workspaceId: string, userId: string): Promise<boolean> {
    await this.deps.db.transaction(async (tx) => {
      const m = await this.requireMember(workspaceId, accountId, tx.db);
      this.refuseDirect(workspaceId, 'managed');
      assertCan(m.role, 'member:remove');
      this.assertNotTimedOut(m);
      const target = isId(userId) ? await findMember(tx.db, workspaceId, userId) : undefined;
      if (!target) throw notFound('member');
      assertOutranks(m.role, target.role);
      await lockWorkspace(tx.db, workspaceId);
      await deleteMember(tx.db, workspaceId, userId);
      emit(tx, this.deps.bus, this.now(), 'MemberLeft', {
        audience: { kind: 'workspace' },
        serverId: workspaceId,
        userId,
        reason: 'removed',
        removedBy: accountId,
      });
    });
    return true;
  }

  /**
   * Times a member out for `minutes` (1 to 28 days): every write in the workspace answers
   * TIMED_OUT until then. A new timeout replaces the running one.
   */
  async timeoutMember(
    accountId: string,
    workspaceId: string,
    userId: string,
    minutes: number,
  ): Promise<WorkspaceMemberView> {
    if (!Number.isInteger(minutes) || minutes < 1 || minutes > TIMEOUT_MAX_MINUTES) {
      throw validation(`minutes must be a whole number from 1 to ${TIMEOUT_MAX_MINUTES} (28 days)`);
    }
    return this.setTimeout(accountId, workspaceId, userId, this.now() + minutes * MINUTE_MS);
  }

  /** Ends a member's timeout at once. */
  async clearTimeout(
    accountId: string,
    workspaceId: string,
    userId: string,
  ): Promise<WorkspaceMemberView> {
    return this.setTimeout(accountId, workspaceId, userId, null);
  }

  private async setTimeout(
    accountId: string,
    workspaceId: string,
    userId: string,
    until: number | null,
  ): Promise<WorkspaceMemberView> {
    await this.deps.db.transaction(async (tx) => {
      const m = await this.requireMember(workspaceId, accountId, tx.db);
      this.refuseDirect(workspaceId, 'moderated');
      assertCan(m.role, 'member:timeout');
      this.assertNotTimedOut(m);
      const target = isId(userId) ? await findMember(tx.db, workspaceId, userId) : undefined;
      if (!target) throw notFound('member');
      assertOutranks(m.role, target.role);
      await setMemberTimeout(tx.db, workspaceId, userId, until);
      emit(tx, this.deps.bus, this.now(), 'MemberTimedOut', {
        audience: { kind: 'workspace' },
        serverId: workspaceId,
        userId,
        until: iso(until),
        by: accountId,
      });
    });
    return this.member(accountId, workspaceId, userId);
  }

  private refuseDirect(workspaceId: string, what: string): void {
    if (workspaceId === DIRECT_SPACE_ID) {
      throw new AppError('VALIDATION', `the direct space cannot be ${what}`);
    }
  }
}
