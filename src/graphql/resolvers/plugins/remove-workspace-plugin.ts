import { requireActor } from '../../context.js';
import type { MutationResolvers } from '../../generated/resolver-types.js';

export const removeWorkspacePlugin: MutationResolvers['removeWorkspacePlugin'] = async (
  _parent,
  args,
  ctx,
) => ({ id: await ctx.services.plugins.remove(requireActor(ctx), args.id) });
