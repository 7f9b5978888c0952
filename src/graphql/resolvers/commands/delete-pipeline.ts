import { requireActor } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

export const deletePipeline: Resolver<unknown, { id: string }> = (_parent, args, ctx) =>
  ctx.services.commands.pipelines.delete(requireActor(ctx), args.id);
