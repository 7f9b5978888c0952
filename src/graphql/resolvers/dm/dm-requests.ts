import type { KeysetArgs } from '../../../services/paging/index.js';
import { requireActor } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

export const dmRequests: Resolver<unknown, KeysetArgs> = (_parent, args, ctx) =>
  ctx.services.dm.pendingRequests(requireActor(ctx), args);
