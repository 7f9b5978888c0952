import { requireActor } from '../../context.js';
import type { SubscriptionResolver } from '../../resolver-types.js';

/** workspaceEvents(serverId): authorizes once and loads the caller's access (NOT_FOUND). */
export const workspaceEvents: SubscriptionResolver<{
  serverId: string;
  joinedChannelsOnly?: boolean | null;
}> = {
  subscribe: (_parent, { serverId, joinedChannelsOnly }, ctx) =>
    ctx.services.realtime.workspaceStream(requireActor(ctx), serverId, {
      joinedChannelsOnly: joinedChannelsOnly === true,
    }),
  resolve: (event) => event,
};
