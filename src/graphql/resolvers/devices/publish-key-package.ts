import { requireActor } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

export const publishKeyPackage: Resolver<
  unknown,
  {
    deviceId: string;
    keyPackage?: string | null;
    keyPackages?: string[] | null;
    lastResortKeyPackage?: string | null;
  }
> = (_parent, { deviceId, ...input }, ctx) =>
  ctx.services.mls.keyPackages.publishKeyPackages(requireActor(ctx), deviceId, input);
