import { transaction } from '../../../db/transaction.js';
import type { Resolver } from '../../resolver-types.js';

export const logout: Resolver = async (_parent, _args, ctx) => {
  ctx.cookies.clearSession();
  const session = ctx.session;
  if (!session) return false;
  const ended = await transaction(ctx.app.db.kysely, (tx) =>
    ctx.app.services.sessions.end(tx, { sessionId: session.sessionId }, 'logout'),
  );
  return ended.length > 0;
};
