import { requireActor } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

export const deleteWorkspace: Resolver<
  unknown,
  { input: { serverId: string; confirmName: string } }
> = async (_parent, { input }, ctx) => ({
  deleted: await ctx.services.workspaces.lifecycle.delete(
    requireActor(ctx),
    input.serverId,
    input.confirmName,
  ),
});
