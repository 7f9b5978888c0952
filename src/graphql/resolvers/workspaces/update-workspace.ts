import { requireActor } from '../../context.js';
import type { MutationResolvers } from '../../generated/resolver-types.js';

export const updateWorkspace: MutationResolvers['updateWorkspace'] = (_parent, { input }, ctx) =>
  ctx.services.workspaces.lifecycle.update(requireActor(ctx), input.serverId, {
    name: input.name,
    description: input.description,
  });
