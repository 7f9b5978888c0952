import { requireActor } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

export const changePassword: Resolver<
  unknown,
  { input: { currentPassword: string; newPassword: string } }
> = async (_parent, { input }, ctx) => {
  await ctx.services.accounts.changePassword(requireActor(ctx), input);
  return true;
};
