import type { MutationResolvers } from '../../generated/resolver-types.js';

export const resetPassword: MutationResolvers['resetPassword'] = async (
  _parent,
  { input },
  ctx,
) => {
  await ctx.services.passwordResets.reset(input);
  return true;
};
