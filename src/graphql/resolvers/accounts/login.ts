import type { Resolver } from '../../resolver-types.js';
import { startSessionPayload } from './session-payload.js';

export const login: Resolver<unknown, { input: { username: string; password: string } }> = async (
  _parent,
  { input },
  ctx,
) => {
  const signedIn = await ctx.services.accounts.login({
    username: input.username,
    password: input.password,
    ip: ctx.ip,
    userAgent: ctx.userAgent,
  });
  return startSessionPayload(ctx, signedIn);
};
