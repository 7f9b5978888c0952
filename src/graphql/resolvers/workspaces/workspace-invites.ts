import { requireActor } from '../../context.js';
import type { QueryResolvers } from '../../generated/resolver-types.js';

export const workspaceInvites: QueryResolvers['workspaceInvites'] = (
  _parent,
  { serverId, ...page },
  ctx,
) => ctx.services.invites.list(requireActor(ctx), serverId, page);
