import { requireActor } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

export const publishKeyPackage: Resolver<unknown, { deviceId: string; keyPackage: string }> = (
  _parent,
  { deviceId, keyPackage },
  ctx,
) => ctx.app.services.devices.publishKeyPackage(requireActor(ctx), deviceId, keyPackage);
