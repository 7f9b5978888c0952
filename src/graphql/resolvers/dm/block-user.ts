import { requireActor } from '../../context.js';
import type { MutationResolvers } from '../../generated/resolver-types.js';

export const blockUser: MutationResolvers['blockUser'] = (_parent, args, ctx) =>
  ctx.services.dm.block(requireActor(ctx), args.userId);
