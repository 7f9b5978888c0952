import { requireActor } from '../../context.js';
import type { MutationResolvers } from '../../generated/resolver-types.js';

export const revokeInstanceInvite: MutationResolvers['revokeInstanceInvite'] = (
  _parent,
  { id },
  ctx,
) => ctx.services.registration.revokeInstanceInvite(requireActor(ctx), id);
