import { AppError } from '../errors.js';

// The workspace permission catalogue: which role may do which action. docs/permissions.md is the
// same table in prose; a change here is a change there. Services check it with `assertCan` next to
// the rule it guards; fields that resolve to null for the unauthorised use `can`.
//
// Roles rank owner > moderator > member > guest. Actions on another person (role changes,
// removal, timeouts) also need the actor to outrank the target (`outranks`), as in Discord's role
// hierarchy: a moderator manages members and guests, never another moderator or the owner.

export type Role = 'owner' | 'moderator' | 'member' | 'guest';

export const ROLES: readonly Role[] = ['owner', 'moderator', 'member', 'guest'];

const RANK: Record<Role, number> = { owner: 3, moderator: 2, member: 1, guest: 0 };

const ALL: readonly Role[] = ROLES;
const STAFF: readonly Role[] = ['owner', 'moderator'];
const MEMBERS: readonly Role[] = ['owner', 'moderator', 'member'];
const OWNER: readonly Role[] = ['owner'];

/** Every workspace action and the roles that may take it. */
export const PERMISSIONS = {
  // The workspace itself
  'workspace:read': ALL,
  'workspace:update': STAFF,
  'workspace:delete': OWNER,
  'workspace:transfer': OWNER,
  /** Leaving; the owner must hand the workspace over first (a rule in the service). */
  'workspace:leave': ['moderator', 'member', 'guest'],
  // People
  /** Browsing the member directory; guests see only themselves. */
  'member:list': MEMBERS,
  'member:setRole': STAFF,
  'member:remove': STAFF,
  'member:timeout': STAFF,
  // Invites
  /** Member invites; guest invites need `invite:createGuest`. */
  'invite:create': MEMBERS,
  'invite:createGuest': STAFF,
  /** Listing and revoking every invite; anyone may list and revoke the invites they made. */
  'invite:manage': STAFF,
  // Channels
  'channel:create': MEMBERS,
  'channel:createPrivate': MEMBERS,
  /** Browsing and joining public channels; guests only see the channels they were given. */
  'channel:browse': MEMBERS,
  'channel:join': MEMBERS,
  /** Rename and topic, for members of the channel; staff for any channel. */
  'channel:update': MEMBERS,
  'channel:updateAny': STAFF,
  'channel:archive': STAFF,
  /** Adding a workspace member to a channel the actor is in (staff: any channel). */
  'channel:addMember': MEMBERS,
  /** Adding a guest to a channel: guest access is decided by staff. */
  'channel:addGuest': STAFF,
  'channel:removeMember': STAFF,
  // Messages
  'message:post': ALL,
  'message:react': ALL,
  'message:deleteAny': STAFF,
  'message:pin': MEMBERS,
  'message:viewEditHistory': STAFF,
  'conversation:archive': STAFF,
  // Workspace customisation (other areas)
  /** Adding and deleting custom emoji (Slack's and Discord's default: staff manage them). */
  'emoji:manage': STAFF,
  'plugin:manage': STAFF,
  'macro:manage': STAFF,
  'pipeline:manage': STAFF,
  'keybind:manage': STAFF,
  'notification:manageWorkspace': STAFF,
  // Moderation
  'report:view': STAFF,
  'audit:view': STAFF,
} as const satisfies Record<string, readonly Role[]>;

export type Action = keyof typeof PERMISSIONS;

/** Whether a role may take an action. */
export function can(role: Role | null | undefined, action: Action): boolean {
  if (!role) return false;
  return (PERMISSIONS[action] as readonly Role[]).includes(role);
}

/** FORBIDDEN unless the role may take the action. */
export function assertCan(role: Role | null | undefined, action: Action): void {
  if (!can(role, action)) {
    throw new AppError('FORBIDDEN', `your role in this workspace may not do this (${action})`);
  }
}

/** A guest: in a workspace only for the channels they were given (adding one is staff's). */
export function isGuest(role: Role | null | undefined): boolean {
  return role === 'guest';
}

/** Whether `actor` ranks strictly above `target` (needed to act on another person). */
export function outranks(actor: Role, target: Role): boolean {
  return RANK[actor] > RANK[target];
}

/** FORBIDDEN unless `actor` ranks strictly above `target`. */
export function assertOutranks(actor: Role, target: Role): void {
  if (!outranks(actor, target)) {
    throw new AppError('FORBIDDEN', `a ${actor} may not act on a ${target} of this workspace`);
  }
}

/** Whether a role is at least `min` (owner >= moderator >= member >= guest). */
export function atLeast(role: Role, min: Role): boolean {
  return RANK[role] >= RANK[min];
}
