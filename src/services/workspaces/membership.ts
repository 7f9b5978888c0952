import { actingAccountId, type Actor } from '../../auth/actor.js';
import { assertCan } from '../../auth/policy.js';
import { DIRECT_SPACE_ID } from '../../db/direct-space.js';
import type { Tx } from '../../db/transaction.js';
import { capExceeded, notFound, validation } from '../../errors.js';
import { isId } from '../../lib/ids.js';
import {
  addConversationMembers,
  findChannelsIn,
  listOpenPublicChannelIds,
} from '../conversations/channel-queries.js';

import { emitWorkspaceEvent } from './events.js';
import {
  countMembers,
  deleteMember,
  findMember,
  findWorkspace,
  insertMember,
  lockWorkspace,
} from './queries.js';
import { assertNotTimedOut, type Membership } from '../authz/write-rules.js';
import { refuseDirect } from './rules.js';
import { WorkspacePart } from './workspace-part.js';

/**
 * Who belongs to a workspace: joining (`addMember`, `joinAsMember`), leaving, and the timeout
 * check. The owner of the `workspace_member` table. Who may do what in a workspace is asked of
 * `Authz` (services/authz), which reads the membership once per request.
 */
export class WorkspaceMembership extends WorkspacePart {
  private readonly joinedHooks: Array<(workspaceId: string, accountId: string) => void> = [];

  /**
   * Work another area does after someone joined a workspace (pipelines' member-joined trigger).
   * Runs after the commit on this process; a hook starts its own work and returns at once.
   */
  onJoined(hook: (workspaceId: string, accountId: string) => void): void {
    this.joinedHooks.push(hook);
  }

  /** TIMED_OUT with `until` (RFC 3339) while the membership's timeout runs. */
  assertNotTimedOut(membership: Pick<Membership, 'timedOutUntil'>): void {
    assertNotTimedOut(membership, this.now());
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
    emitWorkspaceEvent(tx, this.deps.events, 'MemberJoined', now, {
      audience: { kind: 'workspace' },
      serverId: workspaceId,
      userId: accountId,
      role: opts.role,
      channelIds,
      inviteId: opts.inviteId ?? null,
    });
    tx.onCommit(() => {
      for (const hook of this.joinedHooks) hook(workspaceId, accountId);
    });
    return { joined: true };
  }

  /** Leaves a workspace; the owner must hand it over first (VALIDATION). */
  async leave(actor: Actor, workspaceId: string): Promise<boolean> {
    const accountId = actingAccountId(actor);
    await this.deps.db.transaction(async (tx) => {
      const m = await this.deps.authz.requireMember(actor, { workspaceId, db: tx.db });
      refuseDirect(workspaceId, 'left');
      if (m.role === 'owner') {
        throw validation(
          'the owner cannot leave; hand the workspace over with transferWorkspaceOwnership, or delete it',
        );
      }
      assertCan(m.role, 'workspace:leave');
      await lockWorkspace(tx.db, workspaceId);
      await deleteMember(tx.db, workspaceId, accountId);
      emitWorkspaceEvent(tx, this.deps.events, 'MemberLeft', this.now(), {
        audience: { kind: 'workspace' },
        serverId: workspaceId,
        userId: accountId,
        reason: 'left',
      });
    });
    this.deps.authz.forget(actor, workspaceId);
    return true;
  }
}
