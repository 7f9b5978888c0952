import type { Resolver } from '../../resolver-types.js';

export const deviceLinkOfferStatus: Resolver<unknown, { offerId: string; offerSecret: string }> = (
  _parent,
  { offerId, offerSecret },
  ctx,
) => ctx.services.devices.linkOfferStatus(offerId, offerSecret);
