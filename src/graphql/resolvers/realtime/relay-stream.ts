import { requireActor } from '../../context.js';
import type { SubscriptionResolver } from '../../resolver-types.js';

/**
 * relayStream: the caller's own topic, where services publish what only they may see (events of
 * direct and group conversations go to each member's topic).
 */
export const relayStream: SubscriptionResolver = {
  subscribe: (_parent, _args, ctx) => ctx.services.realtime.relayStream(requireActor(ctx)),
  resolve: (event) => event,
};
