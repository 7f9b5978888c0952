import { requireActor } from '../../context.js';
import type { MutationResolvers } from '../../generated/resolver-types.js';

export const removeWorkspaceMember: MutationResolvers['removeWorkspaceMember'] = (
  _parent,
  { serverId, userId },
  ctx,
) => ctx.services.workspaces.members.removeMember(requireActor(ctx), serverId, userId);
