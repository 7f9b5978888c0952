import { requireActor } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

export const removeWorkspaceMember: Resolver<unknown, { serverId: string; userId: string }> = (
  _parent,
  { serverId, userId },
  ctx,
) => ctx.services.workspaces.members.removeMember(requireActor(ctx), serverId, userId);
