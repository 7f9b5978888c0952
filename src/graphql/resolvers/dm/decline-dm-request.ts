import { requireActor } from '../../context.js';
import type { MutationResolvers } from '../../generated/resolver-types.js';

export const declineDmRequest: MutationResolvers['declineDmRequest'] = (_parent, args, ctx) =>
  ctx.services.dm.declineRequest(requireActor(ctx), args.requestId);
