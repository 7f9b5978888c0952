import type { MutationResolvers } from '../../generated/resolver-types.js';
import { startSessionPayload } from '../accounts/session-payload.js';

export const loginWithKey: MutationResolvers['loginWithKey'] = async (_parent, { proof }, ctx) => {
  const signedIn = await ctx.services.keyAuth.login({
    proof,
    ip: ctx.ip,
    userAgent: ctx.userAgent,
  });
  return startSessionPayload(ctx, signedIn);
};
