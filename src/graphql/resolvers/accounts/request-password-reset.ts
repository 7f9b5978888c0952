import type { MutationResolvers } from '../../generated/resolver-types.js';

export const requestPasswordReset: MutationResolvers['requestPasswordReset'] = async (
  _parent,
  { input },
  ctx,
) => {
  await ctx.services.passwordResets.request(input);
  return true;
};
