import type { KeysetArgs } from '../../../services/paging/index.js';
import { requireSession } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

export const mySessions: Resolver<unknown, KeysetArgs> = (_parent, args, ctx) =>
  ctx.services.sessions.listMine(requireSession(ctx), args);
