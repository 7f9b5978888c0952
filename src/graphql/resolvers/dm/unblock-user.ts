import { requireActor } from '../../context.js';
import type { MutationResolvers } from '../../generated/resolver-types.js';

export const unblockUser: MutationResolvers['unblockUser'] = (_parent, args, ctx) =>
  ctx.services.dm.unblock(requireActor(ctx), args.userId);
