import { iso } from '../../lib/iso-time.js';
import { actingAccountId, type Actor } from '../../auth/actor.js';
import { assertCan, assertOutranks, can, type Action, type Role } from '../../auth/policy.js';
import { DIRECT_SPACE_ID } from '../../db/direct-space.js';
import type { Tx } from '../../db/transaction.js';
import { AppError, notFound, validation } from '../../errors.js';
import { MINUTE_MS } from '../../lib/clock.js';
import { decodeCursor, encodeCursor } from '../../lib/cursor.js';
import { isId } from '../../lib/ids.js';

import { emitWorkspaceEvent } from './events.js';
import type { WorkspaceMembership } from './membership.js';
import {
  deleteMember,
  findMember,
  listMembersPage,
  lockWorkspace,
  type MemberPageRow,
  setMemberRole,
  setMemberTimeout,
} from './queries.js';
import { refuseDirect } from './rules.js';
import { type MemberPage, toMemberView, type WorkspaceMemberView } from './views.js';
import { WorkspacePart, type WorkspaceServiceDeps } from './workspace-part.js';

/** Longest page of the member directory. */
const MEMBER_PAGE_MAX = 200;
/** The longest timeout: 28 days, as Discord allows. */
export const TIMEOUT_MAX_MINUTES = 28 * 24 * 60;

/** The member directory and what staff do to members: roles, removal and timeouts. */
export class WorkspaceMembers extends WorkspacePart {
  constructor(
    deps: WorkspaceServiceDeps,
    private readonly membership: WorkspaceMembership,
  ) {
    super(deps);
  }

  /**
   * A page of members in the order they joined. Guests see only themselves (Slack's guests
   * cannot browse the directory); the direct space has no member list (VALIDATION).
   */
  async membersPage(
    actor: Actor,
    workspaceId: string,
    args: { after?: string | null; before?: string | null; limit?: number | null },
  ): Promise<MemberPage> {
    const accountId = actingAccountId(actor);
    const m = await this.deps.authz.requireMember(actor, { workspaceId });
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
  async member(actor: Actor, workspaceId: string, userId: string): Promise<WorkspaceMemberView> {
    await this.deps.authz.requireMember(actor, { workspaceId });
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

  /** `member` for a nullable field: null wherever `member` answers NOT_FOUND. */
  async memberOrNull(
    actor: Actor,
    workspaceId: string,
    userId: string,
  ): Promise<WorkspaceMemberView | null> {
    if (workspaceId === DIRECT_SPACE_ID) return null;
    try {
      return await this.member(actor, workspaceId, userId);
    } catch (err) {
      if (err instanceof AppError && err.code === 'NOT_FOUND') return null;
      throw err;
    }
  }

  /**
   * Changes a member's role. Never grants owner (VALIDATION: use transferWorkspaceOwnership).
   * The caller must outrank both the member's current role and the role given.
   */
  async setMemberRole(
    actor: Actor,
    workspaceId: string,
    userId: string,
    role: Role,
  ): Promise<WorkspaceMemberView> {
    const accountId = actingAccountId(actor);
    await this.deps.db.transaction(async (tx) => {
      const m = await this.deps.authz.requireMember(actor, { workspaceId, db: tx.db });
      refuseDirect(workspaceId, 'given roles');
      if (role === 'owner') {
        throw validation(
          'setMemberRole never grants the owner role; use transferWorkspaceOwnership',
        );
      }
      assertCan(m.role, 'member:setRole');
      this.membership.assertNotTimedOut(m);
      const target = await findMember(tx.db, workspaceId, userId);
      if (!target) throw notFound('member');
      assertOutranks(m.role, target.role);
      assertOutranks(m.role, role);
      if (target.role === role) return;
      await setMemberRole(tx.db, workspaceId, userId, role);
      emitWorkspaceEvent(tx, this.deps.events, 'MemberRoleChanged', this.now(), {
        audience: { kind: 'workspace' },
        serverId: workspaceId,
        userId,
        role,
        previousRole: target.role,
        changedBy: accountId,
      });
    });
    return this.member(actor, workspaceId, userId);
  }

  /** Removes someone the caller outranks (owner and Moderators). */
  async removeMember(actor: Actor, workspaceId: string, userId: string): Promise<boolean> {
    const accountId = actingAccountId(actor);
    await this.deps.db.transaction(async (tx) => {
      await this.outranked(tx, actor, 'member:remove', workspaceId, userId, 'managed');
      await lockWorkspace(tx.db, workspaceId);
      await deleteMember(tx.db, workspaceId, userId);
      emitWorkspaceEvent(tx, this.deps.events, 'MemberLeft', this.now(), {
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
    actor: Actor,
    workspaceId: string,
    userId: string,
    minutes: number,
  ): Promise<WorkspaceMemberView> {
    if (!Number.isInteger(minutes) || minutes < 1 || minutes > TIMEOUT_MAX_MINUTES) {
      throw validation(`minutes must be a whole number from 1 to ${TIMEOUT_MAX_MINUTES} (28 days)`);
    }
    return this.setTimeout(actor, workspaceId, userId, this.now() + minutes * MINUTE_MS);
  }

  /** Ends a member's timeout at once. */
  async clearTimeout(
    actor: Actor,
    workspaceId: string,
    userId: string,
  ): Promise<WorkspaceMemberView> {
    return this.setTimeout(actor, workspaceId, userId, null);
  }

  /**
   * Checks in `tx` that the caller may take `action` on members (not while timed out, never in
   * the direct space: `what` it cannot be) and outranks the member `userId`.
   */
  private async outranked(
    tx: Tx,
    actor: Actor,
    action: Action,
    workspaceId: string,
    userId: string,
    what: string,
  ): Promise<void> {
    const m = await this.deps.authz.requireMember(actor, { workspaceId, db: tx.db });
    refuseDirect(workspaceId, what);
    assertCan(m.role, action);
    this.membership.assertNotTimedOut(m);
    const target = isId(userId) ? await findMember(tx.db, workspaceId, userId) : undefined;
    if (!target) throw notFound('member');
    assertOutranks(m.role, target.role);
  }

  private async setTimeout(
    actor: Actor,
    workspaceId: string,
    userId: string,
    until: number | null,
  ): Promise<WorkspaceMemberView> {
    const accountId = actingAccountId(actor);
    await this.deps.db.transaction(async (tx) => {
      await this.outranked(tx, actor, 'member:timeout', workspaceId, userId, 'moderated');
      await setMemberTimeout(tx.db, workspaceId, userId, until);
      emitWorkspaceEvent(tx, this.deps.events, 'MemberTimedOut', this.now(), {
        audience: { kind: 'workspace' },
        serverId: workspaceId,
        userId,
        until: iso(until),
        by: accountId,
      });
    });
    return this.member(actor, workspaceId, userId);
  }
}
