import type { Resolver } from '../../resolver-types.js';

export const login: Resolver<unknown, { input: { username: string; password: string } }> = async (
  _parent,
  { input },
  ctx,
) => {
  const { account, session } = await ctx.app.services.accounts.login({
    username: input.username,
    password: input.password,
    ip: ctx.ip,
    userAgent: ctx.userAgent,
  });
  ctx.cookies.startSession(session);
  return {
    user: { ...account, viewerIsSelf: true },
    csrfToken: session.csrfToken,
    expiresAt: session.expiresAt,
    serverId: null,
  };
};
