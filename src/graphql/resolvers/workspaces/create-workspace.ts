import { requireActor } from '../../context.js';
import type { MutationResolvers } from '../../generated/resolver-types.js';

export const createWorkspace: MutationResolvers['createWorkspace'] = (_parent, { input }, ctx) =>
  ctx.services.workspaces.lifecycle.create(requireActor(ctx), input);
