import { requireActor } from '../../context.js';
import type { MutationResolvers } from '../../generated/resolver-types.js';

export const revokeDevice: MutationResolvers['revokeDevice'] = async (
  _parent,
  { deviceId },
  ctx,
) => {
  const { endedOwnSession } = await ctx.services.devices.revoke(requireActor(ctx), deviceId);
  // Revoking the calling device signs it out here too.
  if (endedOwnSession) ctx.cookies.clearSession();
  return true;
};
