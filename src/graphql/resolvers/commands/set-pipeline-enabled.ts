import { requireActor } from '../../context.js';
import type { MutationResolvers } from '../../generated/resolver-types.js';

export const setPipelineEnabled: MutationResolvers['setPipelineEnabled'] = (_parent, args, ctx) =>
  ctx.services.commands.pipelines.setEnabled(requireActor(ctx), args.id, args.enabled);
