import { requireActor } from '../../context.js';
import type { MutationResolvers } from '../../generated/resolver-types.js';

export const publishKeyPackage: MutationResolvers['publishKeyPackage'] = (
  _parent,
  { deviceId, ...input },
  ctx,
) => ctx.services.mls.keyPackages.publishKeyPackages(requireActor(ctx), deviceId, input);
