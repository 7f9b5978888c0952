import { DEFAULT_CHANNELS, WorkspaceLifecycle, type WorkspaceDeletionHook } from './lifecycle.js';
import { TIMEOUT_MAX_MINUTES, WorkspaceMembers } from './members.js';
import { WorkspaceMembership } from './membership.js';
import type { Membership } from '../authz/write-rules.js';
import type { MemberPage, WorkspaceMemberView, WorkspaceView } from './views.js';
import type { WorkspaceServiceDeps } from './workspace-part.js';

export { DEFAULT_CHANNELS, TIMEOUT_MAX_MINUTES };
export type {
  MemberPage,
  Membership,
  WorkspaceDeletionHook,
  WorkspaceMemberView,
  WorkspaceServiceDeps,
  WorkspaceView,
};

/**
 * Workspaces, their members and roles: creation, settings, hand-over, deletion, leaving,
 * removal and timeouts. Other areas ask `Authz` who may do what, call `assertNotTimedOut` to
 * guard their writes, and `joinAsMember` to add someone (signups).
 *
 * One object for the edges and other areas, built from parts along the area's seams:
 * `membership.ts` (who belongs, joining, leaving), `members.ts` (the directory, roles, removal,
 * timeouts) and `lifecycle.ts` (the workspace itself: settings, hand-over, deletion).
 */
export class WorkspaceService {
  // Membership
  readonly assertNotTimedOut: WorkspaceMembership['assertNotTimedOut'];
  readonly joinAsMember: WorkspaceMembership['joinAsMember'];
  readonly addMember: WorkspaceMembership['addMember'];
  readonly leave: WorkspaceMembership['leave'];
  readonly onJoined: WorkspaceMembership['onJoined'];
  // Members
  readonly membersPage: WorkspaceMembers['membersPage'];
  readonly member: WorkspaceMembers['member'];
  readonly memberOrNull: WorkspaceMembers['memberOrNull'];
  readonly setMemberRole: WorkspaceMembers['setMemberRole'];
  readonly removeMember: WorkspaceMembers['removeMember'];
  readonly timeoutMember: WorkspaceMembers['timeoutMember'];
  readonly clearTimeout: WorkspaceMembers['clearTimeout'];
  // The workspace itself
  readonly get: WorkspaceLifecycle['get'];
  readonly listMine: WorkspaceLifecycle['listMine'];
  readonly pageMine: WorkspaceLifecycle['pageMine'];
  readonly create: WorkspaceLifecycle['create'];
  readonly update: WorkspaceLifecycle['update'];
  readonly transferOwnership: WorkspaceLifecycle['transferOwnership'];
  readonly onDelete: WorkspaceLifecycle['onDelete'];
  readonly delete: WorkspaceLifecycle['delete'];
  readonly deleteForPurge: WorkspaceLifecycle['deleteForPurge'];

  constructor(deps: WorkspaceServiceDeps) {
    const membership = new WorkspaceMembership(deps);
    const members = new WorkspaceMembers(deps, membership);
    const lifecycle = new WorkspaceLifecycle(deps, membership);
    this.assertNotTimedOut = membership.assertNotTimedOut.bind(membership);
    this.joinAsMember = membership.joinAsMember.bind(membership);
    this.addMember = membership.addMember.bind(membership);
    this.leave = membership.leave.bind(membership);
    this.onJoined = membership.onJoined.bind(membership);
    this.membersPage = members.membersPage.bind(members);
    this.member = members.member.bind(members);
    this.memberOrNull = members.memberOrNull.bind(members);
    this.setMemberRole = members.setMemberRole.bind(members);
    this.removeMember = members.removeMember.bind(members);
    this.timeoutMember = members.timeoutMember.bind(members);
    this.clearTimeout = members.clearTimeout.bind(members);
    this.get = lifecycle.get.bind(lifecycle);
    this.listMine = lifecycle.listMine.bind(lifecycle);
    this.pageMine = lifecycle.pageMine.bind(lifecycle);
    this.create = lifecycle.create.bind(lifecycle);
    this.update = lifecycle.update.bind(lifecycle);
    this.transferOwnership = lifecycle.transferOwnership.bind(lifecycle);
    this.onDelete = lifecycle.onDelete.bind(lifecycle);
    this.delete = lifecycle.delete.bind(lifecycle);
    this.deleteForPurge = lifecycle.deleteForPurge.bind(lifecycle);
  }
}
