import type { Resolvers } from '../../resolver-types.js';

import { clearTimeout } from './clear-timeout.js';
import { createWorkspaceInvite } from './create-workspace-invite.js';
import { createWorkspace } from './create-workspace.js';
import { deleteWorkspace } from './delete-workspace.js';
import { InviteState, WorkspaceRole } from './enums.js';
import { joinWorkspace } from './join-workspace.js';
import { leaveWorkspace } from './leave-workspace.js';
import { myWorkspaces } from './my-workspaces.js';
import { removeWorkspaceMember } from './remove-workspace-member.js';
import { revokeWorkspaceInvite } from './revoke-workspace-invite.js';
import { setMemberRole } from './set-member-role.js';
import { timeoutMember } from './timeout-member.js';
import { transferWorkspaceOwnership } from './transfer-workspace-ownership.js';
import { updateWorkspace } from './update-workspace.js';
import { WorkspaceInvite } from './workspace-invite-type.js';
import { workspaceInvites } from './workspace-invites.js';
import { Workspace } from './workspace-type.js';
import { workspace } from './workspace.js';

export const workspaceResolvers: Resolvers = {
  WorkspaceRole,
  InviteState,
  Query: { myWorkspaces, workspace, workspaceInvites },
  Mutation: {
    createWorkspace,
    updateWorkspace,
    setMemberRole,
    transferWorkspaceOwnership,
    deleteWorkspace,
    leaveWorkspace,
    removeWorkspaceMember,
    timeoutMember,
    clearTimeout,
    createWorkspaceInvite,
    revokeWorkspaceInvite,
    joinWorkspace,
  },
  Workspace,
  WorkspaceInvite,
};
