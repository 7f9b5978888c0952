import { requireActor } from '../../context.js';
import type { MutationResolvers } from '../../generated/resolver-types.js';

export const deletePipeline: MutationResolvers['deletePipeline'] = (_parent, args, ctx) =>
  ctx.services.commands.pipelines.delete(requireActor(ctx), args.id);
