import { requireActor } from '../../context.js';
import type { QueryResolvers } from '../../generated/resolver-types.js';

export const searchWorkspaces: QueryResolvers['searchWorkspaces'] = (
  _parent,
  { query, limit },
  ctx,
) => ctx.services.search.workspaces(requireActor(ctx), query, limit);
