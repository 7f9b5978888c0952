import { requireActor } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

export const updateProfile: Resolver<unknown, { input: { displayName?: string | null } }> = (
  _parent,
  { input },
  ctx,
) => ctx.services.accounts.updateProfile(requireActor(ctx), input);
