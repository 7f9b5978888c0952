import type { Resolver } from '../../resolver-types.js';

export const logout: Resolver = async (_parent, _args, ctx) => {
  ctx.cookies.clearSession();
  return ctx.session ? ctx.services.sessions.logout(ctx.session) : false;
};
