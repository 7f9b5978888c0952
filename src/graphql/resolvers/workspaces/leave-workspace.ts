import { requireActor } from '../../context.js';
import type { MutationResolvers } from '../../generated/resolver-types.js';

export const leaveWorkspace: MutationResolvers['leaveWorkspace'] = (_parent, { serverId }, ctx) =>
  ctx.services.workspaces.membership.leave(requireActor(ctx), serverId);
