import { requireActor } from '../../context.js';
import type { QueryResolvers } from '../../generated/resolver-types.js';

export const workspace: QueryResolvers['workspace'] = (_parent, { serverId }, ctx) =>
  ctx.services.workspaces.lifecycle.get(requireActor(ctx), serverId);
