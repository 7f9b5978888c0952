import { optionalActor } from '../../context.js';
import type { MutationResolvers } from '../../generated/resolver-types.js';

export const cancelDeviceLink: MutationResolvers['cancelDeviceLink'] = (
  _parent,
  { offerId, offerSecret },
  ctx,
) => ctx.services.devices.cancelLink(optionalActor(ctx), offerId, offerSecret);
