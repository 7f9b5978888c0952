import { requireActor } from '../../context.js';
import type { MutationResolvers } from '../../generated/resolver-types.js';

export const changePassword: MutationResolvers['changePassword'] = async (
  _parent,
  { input },
  ctx,
) => {
  await ctx.services.accounts.changePassword(requireActor(ctx), input);
  return true;
};
