// The workspaces area's surface: what other areas and the edges use of it (docs/architecture.md,
// "Area surfaces"). The area's own files import each other directly, never this file.
export { emitWorkspaceEvent } from './events.js';
export { InviteService } from './invite-service.js';
export type { CreateInviteInput, InviteView } from './invite-service.js';
export { TIMEOUT_MAX_MINUTES } from './members.js';
export {
  deleteWorkspaceMembershipsOf,
  findMember,
  findMembers,
  findWorkspaceSubscription,
  insertMember,
  insertWorkspace,
  listWorkspacesOf,
  lockWorkspace,
  transferOwnership,
} from './queries.js';
export { myWorkspacesPosition } from './views.js';
export type { WorkspaceMemberView } from './views.js';
export { WorkspaceService } from './workspace-service.js';
export type { WorkspaceView } from './workspace-service.js';
