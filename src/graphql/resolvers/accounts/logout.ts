import type { MutationResolvers } from '../../generated/resolver-types.js';

export const logout: MutationResolvers['logout'] = async (_parent, _args, ctx) => {
  ctx.cookies.clearSession();
  return ctx.session ? ctx.services.sessions.logout(ctx.session) : false;
};
