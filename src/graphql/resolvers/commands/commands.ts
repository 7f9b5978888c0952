import { requireActor } from '../../context.js';
import type { QueryResolvers } from '../../generated/resolver-types.js';

export const commands: QueryResolvers['commands'] = (_parent, args, ctx) =>
  ctx.services.commands.run.list(requireActor(ctx), args.surface, args.context ?? {});
