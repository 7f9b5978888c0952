import type { Resolver } from '../../resolver-types.js';

export const requestPasswordReset: Resolver<
  unknown,
  { input: { emailOrUsername: string } }
> = async (_parent, { input }, ctx) => {
  await ctx.services.passwordResets.request(input);
  return true;
};
