import { requireActor } from '../../context.js';
import type { QueryResolvers } from '../../generated/resolver-types.js';

export const commandDiscover: QueryResolvers['commandDiscover'] = (_parent, args, ctx) =>
  ctx.services.commands.run.discover(requireActor(ctx), args.query, args.context ?? {}, args.limit);
