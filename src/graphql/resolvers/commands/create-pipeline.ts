import { requireActor } from '../../context.js';
import type { MutationResolvers } from '../../generated/resolver-types.js';

export const createPipeline: MutationResolvers['createPipeline'] = (_parent, args, ctx) =>
  ctx.services.commands.pipelines.create(requireActor(ctx), args.input);
