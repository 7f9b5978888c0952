import { requireSession } from '../../context.js';
import type { SubscriptionResolver } from '../../resolver-types.js';
import { LiveSource } from '../../../ws/live-stream.js';
import { WorkspaceStream } from '../../../ws/streams/workspace-stream.js';

/** workspaceEvents(serverId): authorizes once and loads the caller's access (NOT_FOUND). */
export const workspaceEvents: SubscriptionResolver<{ serverId: string }> = {
  subscribe: async (_parent, { serverId }, ctx) => {
    const session = requireSession(ctx);
    const stream = await WorkspaceStream.open(ctx.app.db, session.accountId, serverId);
    ctx.app.services.presence.touch(session.accountId);
    return new LiveSource([stream]);
  },
  resolve: (event) => event,
};
