import { requireActor } from '../../context.js';
import type { QueryResolvers } from '../../generated/resolver-types.js';

export const deviceLinkOffers: QueryResolvers['deviceLinkOffers'] = (_parent, _args, ctx) =>
  ctx.services.devices.pendingLinkOffers(requireActor(ctx));
