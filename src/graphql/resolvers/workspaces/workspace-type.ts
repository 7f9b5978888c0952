import { keyCursor, type KeysetArgs } from '../../../services/paging/index.js';
import { myWorkspacesPosition, type WorkspaceView } from '../../../services/workspaces/index.js';
import { requireActor } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

/** Fields of Workspace beyond the view's own, each one call to a service. */
export const Workspace = {
  role: ((parent) => parent.myRole) as Resolver<WorkspaceView>,
  cursor: ((parent) => {
    const at = myWorkspacesPosition(parent);
    return at && keyCursor(at.at, at.id);
  }) as Resolver<WorkspaceView>,
  channels: ((parent, { includeArchived, ...page }, ctx) =>
    ctx.services.channels.list(requireActor(ctx), parent.id, {
      includeArchived,
      page,
    })) as Resolver<WorkspaceView, KeysetArgs & { includeArchived?: boolean | null }>,
  members: ((parent, args, ctx) =>
    parent.isDirect
      ? null
      : ctx.services.workspaces.members.membersPage(
          requireActor(ctx),
          parent.id,
          args,
        )) as Resolver<
    WorkspaceView,
    { after?: string | null; before?: string | null; limit?: number | null }
  >,
  member: ((parent, { userId }, ctx) =>
    ctx.services.workspaces.members.memberOrNull(requireActor(ctx), parent.id, userId)) as Resolver<
    WorkspaceView,
    { userId: string }
  >,
  invites: ((parent, args, ctx) =>
    ctx.services.invites.list(requireActor(ctx), parent.id, args)) as Resolver<
    WorkspaceView,
    KeysetArgs
  >,
};
