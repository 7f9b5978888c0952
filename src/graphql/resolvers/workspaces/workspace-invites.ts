import type { KeysetArgs } from '../../../services/paging/index.js';
import { requireActor } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

export const workspaceInvites: Resolver<unknown, KeysetArgs & { serverId: string }> = (
  _parent,
  { serverId, ...page },
  ctx,
) => ctx.services.invites.list(requireActor(ctx), serverId, page);
