import { requireActor } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

export const leaveWorkspace: Resolver<unknown, { serverId: string }> = (
  _parent,
  { serverId },
  ctx,
) => ctx.services.workspaces.membership.leave(requireActor(ctx), serverId);
