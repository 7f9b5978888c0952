import { requireActor } from '../../context.js';
import type { MutationResolvers } from '../../generated/resolver-types.js';

export const deleteWorkspace: MutationResolvers['deleteWorkspace'] = async (
  _parent,
  { input },
  ctx,
) => ({
  deleted: await ctx.services.workspaces.lifecycle.delete(
    requireActor(ctx),
    input.serverId,
    input.confirmName,
  ),
});
