import { requireActor } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

export const clearTimeout: Resolver<unknown, { serverId: string; userId: string }> = (
  _parent,
  { serverId, userId },
  ctx,
) => ctx.services.workspaces.clearTimeout(requireActor(ctx), serverId, userId);
