import { requireActor } from '../../context.js';
import type { MutationResolvers } from '../../generated/resolver-types.js';

export const addWorkspacePlugin: MutationResolvers['addWorkspacePlugin'] = (_parent, args, ctx) =>
  ctx.services.plugins.add(requireActor(ctx), args.input);
