import { requireActor } from '../../context.js';
import type { MutationResolvers } from '../../generated/resolver-types.js';

export const acceptDmRequest: MutationResolvers['acceptDmRequest'] = (_parent, args, ctx) =>
  ctx.services.dm.acceptRequest(requireActor(ctx), args.requestId);
