import { requireActor } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

export const removeWorkspacePlugin: Resolver<unknown, { id: string }> = async (
  _parent,
  args,
  ctx,
) => ({ id: await ctx.services.plugins.remove(requireActor(ctx), args.id) });
