import { requireActor } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

export const setPipelineEnabled: Resolver<unknown, { id: string; enabled: boolean }> = (
  _parent,
  args,
  ctx,
) => ctx.services.commands.pipelines.setEnabled(requireActor(ctx), args.id, args.enabled);
