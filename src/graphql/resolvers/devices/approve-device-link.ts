import { requireActor } from '../../context.js';
import type { MutationResolvers } from '../../generated/resolver-types.js';

export const approveDeviceLink: MutationResolvers['approveDeviceLink'] = (
  _parent,
  { input },
  ctx,
) => ctx.services.devices.approveLink(requireActor(ctx), input);
