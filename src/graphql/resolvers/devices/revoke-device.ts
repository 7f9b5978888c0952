import { requireActor } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

export const revokeDevice: Resolver<unknown, { deviceId: string }> = async (
  _parent,
  { deviceId },
  ctx,
) => {
  const { endedOwnSession } = await ctx.services.devices.revoke(requireActor(ctx), deviceId);
  // Revoking the calling device signs it out here too.
  if (endedOwnSession) ctx.cookies.clearSession();
  return true;
};
