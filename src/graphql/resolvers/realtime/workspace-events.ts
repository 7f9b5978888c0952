import { requireSession } from '../../context.js';
import type { SubscriptionResolver } from '../../resolver-types.js';

/** workspaceEvents(serverId): authorizes once and loads the caller's access (NOT_FOUND). */
export const workspaceEvents: SubscriptionResolver<{ serverId: string }> = {
  subscribe: (_parent, { serverId }, ctx) =>
    ctx.app.services.realtime.workspaceStream(requireSession(ctx).accountId, serverId),
  resolve: (event) => event,
};
