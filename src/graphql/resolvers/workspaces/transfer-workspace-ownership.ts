import { requireActor } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

export const transferWorkspaceOwnership: Resolver<
  unknown,
  { input: { serverId: string; userId: string } }
> = (_parent, { input }, ctx) =>
  ctx.services.workspaces.lifecycle.transferOwnership(
    requireActor(ctx),
    input.serverId,
    input.userId,
  );
