import { requireActor } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

export const declineDmRequest: Resolver<unknown, { requestId: string }> = (_parent, args, ctx) =>
  ctx.services.dm.declineRequest(requireActor(ctx), args.requestId);
