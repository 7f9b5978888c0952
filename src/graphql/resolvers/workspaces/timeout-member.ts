import { requireActor } from '../../context.js';
import type { MutationResolvers } from '../../generated/resolver-types.js';

export const timeoutMember: MutationResolvers['timeoutMember'] = (
  _parent,
  { serverId, userId, minutes },
  ctx,
) => ctx.services.workspaces.members.timeoutMember(requireActor(ctx), serverId, userId, minutes);
