import { requireActor } from '../../context.js';
import type { MutationResolvers } from '../../generated/resolver-types.js';

export const clearTimeout: MutationResolvers['clearTimeout'] = (
  _parent,
  { serverId, userId },
  ctx,
) => ctx.services.workspaces.members.clearTimeout(requireActor(ctx), serverId, userId);
