import { requireSession } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';
import type { WorkspaceView } from '../../../services/workspaces/workspace-service.js';

/** Fields of Workspace beyond the view's own, each one call to a service. */
export const Workspace = {
  role: ((parent) => parent.myRole) as Resolver<WorkspaceView>,
  channels: ((parent, args, ctx) =>
    ctx.app.services.channels.list(requireSession(ctx).accountId, parent.id, {
      includeArchived: args.includeArchived,
    })) as Resolver<WorkspaceView, { includeArchived?: boolean | null }>,
  members: ((parent, args, ctx) =>
    parent.isDirect
      ? null
      : ctx.app.services.workspaces.membersPage(
          requireSession(ctx).accountId,
          parent.id,
          args,
        )) as Resolver<
    WorkspaceView,
    { after?: string | null; before?: string | null; limit?: number | null }
  >,
  member: (async (parent, { userId }, ctx) => {
    if (parent.isDirect) return null;
    try {
      return await ctx.app.services.workspaces.member(
        requireSession(ctx).accountId,
        parent.id,
        userId,
      );
    } catch (err) {
      if ((err as { code?: string }).code === 'NOT_FOUND') return null;
      throw err;
    }
  }) as Resolver<WorkspaceView, { userId: string }>,
  invites: ((parent, _args, ctx) =>
    ctx.app.services.invites.list(
      requireSession(ctx).accountId,
      parent.id,
    )) as Resolver<WorkspaceView>,
};
