import type { MutationResolvers } from '../../generated/resolver-types.js';

export const sendDeviceLinkOffer: MutationResolvers['sendDeviceLinkOffer'] = (
  _parent,
  { input },
  ctx,
) => ctx.services.devices.sendLinkOffer(input);
