import { actingAccountId, type Actor } from '../../auth/actor.js';
import { assertCan } from '../../auth/policy.js';
import { DIRECT_SPACE_ID } from '../../db/direct-space.js';
import type { Tx } from '../../db/transaction.js';
import { capExceeded, notFound, validation } from '../../errors.js';
import { MINUTE_MS } from '../../lib/clock.js';
import { isId, newId } from '../../lib/ids.js';
import { lockAccount } from '../accounts/queries.js';
import { keysetRows, parseKeysetArgs, type KeysetArgs } from '../paging/keyset.js';
import { addConversationMembers, insertChannel } from '../conversations/channel-queries.js';

import { emitWorkspaceEvent } from './events.js';
import type { WorkspaceMembership } from './membership.js';
import {
  countOwnedWorkspaces,
  deleteWorkspaceRow,
  findMember,
  findWorkspace,
  findWorkspaceFor,
  insertMember,
  insertWorkspace,
  listMemberIds,
  listWorkspacesOf,
  workspacesOfPage,
  lockWorkspace,
  setMemberRole,
  setMemberTimeout,
  updateWorkspace,
} from './queries.js';
import { refuseDirect } from './rules.js';
import {
  checkDescription,
  checkName,
  directSpaceCursor,
  toView,
  type WorkspaceView,
} from './views.js';
import { WorkspacePart, type WorkspaceServiceDeps } from './workspace-part.js';

/** Work another area does inside the transaction that deletes a workspace (its own rows). */
export type WorkspaceDeletionHook = (tx: Tx, workspaceId: string) => Promise<void>;

/** The default channels of a new workspace, in order; the channel cap may cut the list. */
export const DEFAULT_CHANNELS = [
  { name: 'general', topic: 'Announcements and work for the whole workspace' },
  { name: 'random', topic: 'Everything else' },
] as const;

/** A workspace itself: reading, creation, settings, hand-over and deletion. */
export class WorkspaceLifecycle extends WorkspacePart {
  private readonly deletionHooks: WorkspaceDeletionHook[] = [];

  constructor(
    deps: WorkspaceServiceDeps,
    private readonly membership: WorkspaceMembership,
  ) {
    super(deps);
  }

  /** One workspace the caller belongs to (or the direct space); NOT_FOUND otherwise. */
  async get(actor: Actor, workspaceId: string): Promise<WorkspaceView> {
    const accountId = actingAccountId(actor);
    if (!isId(workspaceId)) throw notFound('workspace');
    const row = await findWorkspaceFor(this.kysely, workspaceId, accountId);
    if (!row) throw notFound('workspace');
    if (row.isDirect !== 1 && row.myRole === null) throw notFound('workspace');
    return toView(row);
  }

  /** The direct space first, then the caller's workspaces in the order joined. */
  async listMine(actor: Actor): Promise<WorkspaceView[]> {
    const accountId = actingAccountId(actor);
    const [direct, rows] = await Promise.all([
      findWorkspaceFor(this.kysely, DIRECT_SPACE_ID, accountId),
      listWorkspacesOf(this.kysely, accountId),
    ]);
    return [...(direct ? [toView(direct)] : []), ...rows.map(toView)];
  }

  /**
   * A page of `listMine`. The direct space heads the list, at (0, its id), before every
   * membership, so it is in a page read from the start or going back past it.
   */
  async pageMine(actor: Actor, args: KeysetArgs): Promise<WorkspaceView[]> {
    const page = parseKeysetArgs(args, { max: 100, default: 100 });
    const accountId = actingAccountId(actor);
    const direct = directSpaceCursor();
    const directInPage = page.before
      ? page.before.at > direct.at || page.before.id > direct.id
      : !page.after;
    const [directRow, rows] = await Promise.all([
      directInPage ? findWorkspaceFor(this.kysely, DIRECT_SPACE_ID, accountId) : undefined,
      workspacesOfPage(this.kysely, accountId, page),
    ]);
    const head = directRow ? [directRow] : [];
    // In the order walked: on from the start, the direct space first; going back, last.
    const walked = page.before ? [...rows, ...head] : [...head, ...rows];
    return keysetRows(walked, page).map(toView);
  }

  /**
   * Creates a workspace owned by the caller, with #general and #random as far as the channel
   * cap allows. Refused during probation and past SVC_LIMIT_WORKSPACES_PER_USER (VALIDATION).
   */
  async create(
    actor: Actor,
    input: { name: unknown; description?: unknown },
  ): Promise<WorkspaceView> {
    const accountId = actingAccountId(actor);
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
    this.deps.authz.forget(actor, id);
    return this.get(actor, id);
  }

  /** Renames or describes a workspace (owner and Moderators). */
  async update(
    actor: Actor,
    workspaceId: string,
    input: { name?: unknown; description?: unknown },
  ): Promise<WorkspaceView> {
    const accountId = actingAccountId(actor);
    await this.deps.db.transaction(async (tx) => {
      const m = await this.deps.authz.requireMember(actor, { workspaceId, db: tx.db });
      refuseDirect(workspaceId, 'renamed or described');
      assertCan(m.role, 'workspace:update');
      this.membership.assertNotTimedOut(m);
      const patch: { name?: string; description?: string | null; updatedAt: number } = {
        updatedAt: this.now(),
      };
      if (input.name !== undefined && input.name !== null) patch.name = checkName(input.name);
      if (input.description !== undefined) patch.description = checkDescription(input.description);
      await updateWorkspace(tx.db, workspaceId, patch);
      emitWorkspaceEvent(tx, this.deps.events, 'WorkspaceUpdated', patch.updatedAt, {
        audience: { kind: 'workspace' },
        serverId: workspaceId,
        updatedBy: accountId,
        ...(patch.name !== undefined ? { name: patch.name } : {}),
        ...(patch.description !== undefined ? { description: patch.description } : {}),
      });
    });
    return this.get(actor, workspaceId);
  }

  /**
   * Hands the workspace to another member in one step: they become owner, the caller a
   * Moderator; both changes are announced with MemberRoleChanged.
   */
  async transferOwnership(
    actor: Actor,
    workspaceId: string,
    userId: string,
  ): Promise<WorkspaceView> {
    const accountId = actingAccountId(actor);
    await this.deps.db.transaction(async (tx) => {
      const m = await this.deps.authz.requireMember(actor, { workspaceId, db: tx.db });
      refuseDirect(workspaceId, 'handed over');
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
        emitWorkspaceEvent(tx, this.deps.events, 'MemberRoleChanged', now, {
          audience: { kind: 'workspace' },
          serverId: workspaceId,
          ...change,
          changedBy: accountId,
        });
      }
    });
    this.deps.authz.forget(actor, workspaceId);
    return this.get(actor, workspaceId);
  }

  /** Registers work to run inside the transaction that deletes a workspace. */
  onDelete(hook: WorkspaceDeletionHook): void {
    this.deletionHooks.push(hook);
  }

  /**
   * Deletes a workspace for good (owner only; `confirmName` must equal its name). Every member
   * gets MemberLeft for themself; then WorkspaceDeleted ends the workspace's streams.
   */
  async delete(actor: Actor, workspaceId: string, confirmName: unknown): Promise<boolean> {
    const accountId = actingAccountId(actor);
    await this.deps.db.transaction(async (tx) => {
      const m = await this.deps.authz.requireMember(actor, { workspaceId, db: tx.db });
      refuseDirect(workspaceId, 'deleted');
      assertCan(m.role, 'workspace:delete');
      const ws = await findWorkspace(tx.db, workspaceId);
      if (!ws) throw notFound('workspace');
      if (typeof confirmName !== 'string' || confirmName !== ws.name) {
        throw validation('confirmName must equal the name of the workspace');
      }
      await this.deleteWithin(tx, workspaceId, accountId);
    });
    this.deps.authz.forget(actor, workspaceId);
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
      emitWorkspaceEvent(tx, this.deps.events, 'MemberLeft', now, {
        audience: { kind: 'users', userIds: [userId] },
        serverId: workspaceId,
        userId,
        reason: 'workspaceDeleted',
      });
    }
    emitWorkspaceEvent(tx, this.deps.events, 'WorkspaceDeleted', now, {
      audience: { kind: 'users', userIds: memberIds },
      serverId: workspaceId,
      deletedBy: by,
    });
  }
}
