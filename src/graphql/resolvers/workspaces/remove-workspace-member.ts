import { requireSession } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

export const removeWorkspaceMember: Resolver<unknown, { serverId: string; userId: string }> = (
  _parent,
  { serverId, userId },
  ctx,
) => ctx.app.services.workspaces.removeMember(requireSession(ctx).accountId, serverId, userId);
