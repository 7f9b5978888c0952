import { requireActor } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

export const deviceLinkOffers: Resolver = (_parent, _args, ctx) =>
  ctx.services.devices.pendingLinkOffers(requireActor(ctx));
