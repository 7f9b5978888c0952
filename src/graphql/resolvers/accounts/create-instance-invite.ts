import { requireActor } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

export const createInstanceInvite: Resolver<
  unknown,
  { email?: string | null; expiresInDays?: number | null; maxUses?: number | null }
> = (_parent, args, ctx) => ctx.services.registration.createInstanceInvite(requireActor(ctx), args);
