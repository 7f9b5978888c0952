import { requireActor } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

export const searchWorkspaces: Resolver<unknown, { query: string; limit?: number | null }> = (
  _parent,
  { query, limit },
  ctx,
) => ctx.services.search.workspaces(requireActor(ctx), query, limit);
