// The workspaces area's surface: what other areas and the edges use of it (docs/architecture.md,
// "Area surfaces"). The area's own files import each other directly, never this file.
export { emitWorkspaceEvent } from './events.js';
export { InviteService } from './invite-service.js';
export type { CreateInviteInput, InviteView } from './invite-service.js';
export { TIMEOUT_MAX_MINUTES } from './members.js';
// Reads.
export { findMember, findMembers, findWorkspaceSubscription, listWorkspacesOf } from './queries.js';
// Writes, in the caller's transaction.
export { insertMember, insertWorkspace, transferOwnership } from './queries.js';
export { deleteWorkspaceMembershipsOf } from './queries.js';
// The workspace's row lock, held to the commit.
export { lockWorkspace } from './queries.js';
export { myWorkspacesPosition } from './views.js';
export type { WorkspaceMemberView } from './views.js';
export { WorkspaceService } from './workspace-service.js';
export type { WorkspaceView } from './workspace-service.js';
