import { requireSession } from '../../context.js';
import type { MutationResolvers } from '../../generated/resolver-types.js';

export const revokeSession: MutationResolvers['revokeSession'] = async (_parent, { id }, ctx) => {
  const session = requireSession(ctx);
  await ctx.services.sessions.revokeMine(session, id);
  if (id === session.sessionId) ctx.cookies.clearSession();
  return true;
};
