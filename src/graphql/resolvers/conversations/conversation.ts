import { requireActor } from '../../context.js';
import type { QueryResolvers } from '../../generated/resolver-types.js';

export const conversation: QueryResolvers['conversation'] = (_parent, args, ctx) =>
  ctx.services.conversations.reading.get(requireActor(ctx), args.id);
