import { requireActor } from '../../context.js';
import type { MutationResolvers } from '../../generated/resolver-types.js';

export const createInstanceInvite: MutationResolvers['createInstanceInvite'] = (
  _parent,
  args,
  ctx,
) => ctx.services.registration.createInstanceInvite(requireActor(ctx), args);
