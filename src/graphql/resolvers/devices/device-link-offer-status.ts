import type { QueryResolvers } from '../../generated/resolver-types.js';

export const deviceLinkOfferStatus: QueryResolvers['deviceLinkOfferStatus'] = (
  _parent,
  { offerId, offerSecret },
  ctx,
) => ctx.services.devices.linkOfferStatus(offerId, offerSecret);
