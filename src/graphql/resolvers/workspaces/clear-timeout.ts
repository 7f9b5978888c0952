import { requireActor } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

export const clearTimeout: Resolver<unknown, { serverId: string; userId: string }> = (
  _parent,
  { serverId, userId },
  ctx,
) => ctx.services.workspaces.members.clearTimeout(requireActor(ctx), serverId, userId);
