import { requireSession } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

export const acceptDmRequest: Resolver<unknown, { requestId: string }> = (_parent, args, ctx) =>
  ctx.app.services.dm.acceptRequest(requireSession(ctx).accountId, args.requestId);
