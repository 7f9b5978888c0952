import { requireActor } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

export const approveDeviceLink: Resolver<
  unknown,
  { input: { offerId: string; code: string; deviceName?: string | null } }
> = (_parent, { input }, ctx) => ctx.services.devices.approveLink(requireActor(ctx), input);
