import { requireSession } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

export const revokeSession: Resolver<unknown, { id: string }> = async (_parent, { id }, ctx) => {
  const session = requireSession(ctx);
  await ctx.services.sessions.revokeMine(session, id);
  if (id === session.sessionId) ctx.cookies.clearSession();
  return true;
};
