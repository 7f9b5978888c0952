import { assertRole } from '../../../config/roles.js';
import { requireActor } from '../../context.js';
import type { SubscriptionResolvers } from '../../generated/resolver-types.js';
import { selects } from '../../selection.js';

/**
 * relayStream: the caller's own topic, where services publish what only they may see (events of
 * direct and group conversations go to each member's topic). `hostServerId` is relay-only: on a
 * server that is not a relay nothing comes from another host, and asking for it is FORBIDDEN
 * at subscribe (docs/federation.md, "Roles").
 */
export const relayStream: SubscriptionResolvers['relayStream'] = {
  subscribe: (_parent, _args, ctx, info) => {
    const actor = requireActor(ctx);
    if (selects(info, ['hostServerId'])) {
      assertRole(ctx.config, 'relay', 'RelayEvent.hostServerId');
    }
    return ctx.services.realtime.relayStream(actor);
  },
  resolve: (event) => event,
};
