import { requireActor } from '../../context.js';
import type { SubscriptionResolvers } from '../../generated/resolver-types.js';

/** workspaceEvents(serverId): authorizes once and loads the caller's access (NOT_FOUND). */
export const workspaceEvents: SubscriptionResolvers['workspaceEvents'] = {
  subscribe: (_parent, { serverId, joinedChannelsOnly }, ctx) =>
    ctx.services.realtime.workspaceStream(requireActor(ctx), serverId, {
      joinedChannelsOnly: joinedChannelsOnly === true,
    }),
  resolve: (event) => event,
};
