import { requireActor } from '../../context.js';
import type { MutationResolvers } from '../../generated/resolver-types.js';

export const updateProfile: MutationResolvers['updateProfile'] = (_parent, { input }, ctx) =>
  ctx.services.accounts.updateProfile(requireActor(ctx), input);
