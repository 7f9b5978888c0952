import { requireActor } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

export const dmRequests: Resolver<unknown, Record<string, never>> = (_parent, _args, ctx) =>
  ctx.services.dm.pendingRequests(requireActor(ctx));
