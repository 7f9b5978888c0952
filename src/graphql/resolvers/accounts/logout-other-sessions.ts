import { requireSession } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

export const logoutOtherSessions: Resolver = (_parent, _args, ctx) =>
  ctx.services.sessions.endOthers(requireSession(ctx));
