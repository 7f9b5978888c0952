import { requireActor } from '../../context.js';
import type { MutationResolvers } from '../../generated/resolver-types.js';

export const updateWorkspacePlugin: MutationResolvers['updateWorkspacePlugin'] = (
  _parent,
  args,
  ctx,
) => ctx.services.plugins.update(requireActor(ctx), args.input);
