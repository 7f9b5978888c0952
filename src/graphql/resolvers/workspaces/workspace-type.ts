import { keyCursor } from '../../../services/paging/index.js';
import { myWorkspacesPosition } from '../../../services/workspaces/index.js';
import { requireActor } from '../../context.js';
import type { TypeResolvers } from '../../generated/resolver-types.js';

/** Fields of Workspace beyond the view's own, each one call to a service. */
export const Workspace: TypeResolvers<'Workspace'> = {
  role: (parent) => parent.myRole,
  cursor: (parent) => {
    const at = myWorkspacesPosition(parent);
    return at && keyCursor(at.at, at.id);
  },
  channels: (parent, { includeArchived, ...page }, ctx) =>
    ctx.services.channels.list(requireActor(ctx), parent.id, {
      includeArchived,
      page,
    }),
  members: (parent, args, ctx) =>
    parent.isDirect
      ? null
      : ctx.services.workspaces.members.membersPage(requireActor(ctx), parent.id, args),
  member: (parent, { userId }, ctx) =>
    ctx.services.workspaces.members.memberOrNull(requireActor(ctx), parent.id, userId),
  invites: (parent, args, ctx) => ctx.services.invites.list(requireActor(ctx), parent.id, args),
};
