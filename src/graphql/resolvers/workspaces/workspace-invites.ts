import { requireActor } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

export const workspaceInvites: Resolver<unknown, { serverId: string }> = (
  _parent,
  { serverId },
  ctx,
) => ctx.services.invites.list(requireActor(ctx), serverId);
