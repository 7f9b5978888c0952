import { requireActor } from '../../context.js';
import type { MutationResolvers } from '../../generated/resolver-types.js';

export const transferWorkspaceOwnership: MutationResolvers['transferWorkspaceOwnership'] = (
  _parent,
  { input },
  ctx,
) =>
  ctx.services.workspaces.lifecycle.transferOwnership(
    requireActor(ctx),
    input.serverId,
    input.userId,
  );
