import type { MutationResolvers } from '../../generated/resolver-types.js';
import { startSessionPayload } from '../accounts/session-payload.js';

export const signupWithKey: MutationResolvers['signupWithKey'] = async (
  _parent,
  { input },
  ctx,
) => {
  const signedIn = await ctx.services.keyAuth.signupWithKey({
    ...input,
    request: {
      inviteToken: input.inviteToken ?? null,
      acceptedTermsUrl: input.acceptedTermsUrl ?? null,
      pow: input.pow ?? null,
    },
    ip: ctx.ip,
    userAgent: ctx.userAgent,
  });
  return startSessionPayload(ctx, signedIn);
};
