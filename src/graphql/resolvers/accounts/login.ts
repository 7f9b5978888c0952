import type { MutationResolvers } from '../../generated/resolver-types.js';
import { startSessionPayload } from './session-payload.js';

export const login: MutationResolvers['login'] = async (_parent, { input }, ctx) => {
  const signedIn = await ctx.services.accounts.login({
    username: input.username,
    password: input.password,
    ip: ctx.ip,
    userAgent: ctx.userAgent,
  });
  return startSessionPayload(ctx, signedIn);
};
