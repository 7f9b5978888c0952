import { requireSession } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

export const workspace: Resolver<unknown, { serverId: string }> = (_parent, { serverId }, ctx) =>
  ctx.app.services.workspaces.get(requireSession(ctx).accountId, serverId);
