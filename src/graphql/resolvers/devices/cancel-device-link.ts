import { optionalActor } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

export const cancelDeviceLink: Resolver<
  unknown,
  { offerId: string; offerSecret?: string | null }
> = (_parent, { offerId, offerSecret }, ctx) =>
  ctx.services.devices.cancelLink(optionalActor(ctx), offerId, offerSecret);
