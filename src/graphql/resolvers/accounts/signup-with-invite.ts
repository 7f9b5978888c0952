import type { MutationResolvers } from '../../generated/resolver-types.js';
import { startSessionPayload } from './session-payload.js';

export const signupWithInvite: MutationResolvers['signupWithInvite'] = async (
  _parent,
  { input },
  ctx,
) => {
  const signedIn = await ctx.services.registration.signupWithPassword({
    ...input,
    ip: ctx.ip,
    userAgent: ctx.userAgent,
  });
  return startSessionPayload(ctx, signedIn);
};
