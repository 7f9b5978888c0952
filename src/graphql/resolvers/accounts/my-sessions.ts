import { requireSession } from '../../context.js';
import type { QueryResolvers } from '../../generated/resolver-types.js';

export const mySessions: QueryResolvers['mySessions'] = (_parent, args, ctx) =>
  ctx.services.sessions.listMine(requireSession(ctx), args);
