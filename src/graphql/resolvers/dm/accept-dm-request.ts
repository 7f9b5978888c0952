import { requireActor } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

export const acceptDmRequest: Resolver<unknown, { requestId: string }> = (_parent, args, ctx) =>
  ctx.services.dm.acceptRequest(requireActor(ctx), args.requestId);
