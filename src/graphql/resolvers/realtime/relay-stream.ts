import { requireSession } from '../../context.js';
import type { SubscriptionResolver } from '../../resolver-types.js';
import { LiveSource } from '../../../ws/live-stream.js';
import { RelayStream } from '../../../ws/streams/relay-stream.js';

/**
 * relayStream: the caller's own topic, where services publish what only they may see (events of
 * direct and group conversations go to each member's topic).
 */
export const relayStream: SubscriptionResolver = {
  subscribe: (_parent, _args, ctx) => {
    const session = requireSession(ctx);
    ctx.app.services.presence.touch(session.accountId);
    return new LiveSource([new RelayStream(session.accountId)]);
  },
  resolve: (event) => event,
};
