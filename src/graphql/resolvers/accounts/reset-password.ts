import type { Resolver } from '../../resolver-types.js';

export const resetPassword: Resolver<
  unknown,
  { input: { token: string; newPassword: string } }
> = async (_parent, { input }, ctx) => {
  await ctx.services.passwordResets.reset(input);
  return true;
};
