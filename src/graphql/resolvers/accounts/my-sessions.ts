import { requireSession } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

export const mySessions: Resolver = (_parent, _args, ctx) =>
  ctx.services.sessions.listMine(requireSession(ctx));
