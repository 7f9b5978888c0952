import { requireActor } from '../../context.js';
import type { QueryResolvers } from '../../generated/resolver-types.js';

export const myWorkspaces: QueryResolvers['myWorkspaces'] = (_parent, args, ctx) =>
  ctx.services.workspaces.lifecycle.pageMine(requireActor(ctx), args);
