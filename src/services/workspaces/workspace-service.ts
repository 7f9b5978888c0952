import { DEFAULT_CHANNELS, WorkspaceLifecycle, type WorkspaceDeletionHook } from './lifecycle.js';
import { TIMEOUT_MAX_MINUTES, WorkspaceMembers } from './members.js';
import { WorkspaceMembership } from './membership.js';
import type { Membership } from '../authz/index.js';
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
 * Its parts, along the area's seams, are its surface (as the command system's and moderation's
 * are): `membership` (`membership.ts`: who belongs, joining, leaving), `members` (`members.ts`:
 * the directory, roles, removal, timeouts) and `lifecycle` (`lifecycle.ts`: the workspace
 * itself: settings, hand-over, deletion).
 */
export class WorkspaceService {
  /** Who belongs: joining (`joinAsMember`, `addMember`), leaving, timeouts' guard, `onJoined`. */
  readonly membership: WorkspaceMembership;
  /** The directory, roles, removal and timeouts. */
  readonly members: WorkspaceMembers;
  /** The workspace itself: creation, settings, hand-over, deletion. */
  readonly lifecycle: WorkspaceLifecycle;

  constructor(deps: WorkspaceServiceDeps) {
    this.membership = new WorkspaceMembership(deps);
    this.members = new WorkspaceMembers(deps, this.membership);
    this.lifecycle = new WorkspaceLifecycle(deps, this.membership);
  }
}
