import { requireActor } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

export const revokeInstanceInvite: Resolver<unknown, { id: string }> = (_parent, { id }, ctx) =>
  ctx.services.registration.revokeInstanceInvite(requireActor(ctx), id);
