import { requireActor } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

export const workspace: Resolver<unknown, { serverId: string }> = (_parent, { serverId }, ctx) =>
  ctx.services.workspaces.lifecycle.get(requireActor(ctx), serverId);
