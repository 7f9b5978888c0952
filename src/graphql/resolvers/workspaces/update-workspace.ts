import { requireActor } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

export const updateWorkspace: Resolver<
  unknown,
  { input: { serverId: string; name?: string | null; description?: string | null } }
> = (_parent, { input }, ctx) =>
  ctx.services.workspaces.lifecycle.update(requireActor(ctx), input.serverId, {
    name: input.name,
    description: input.description,
  });
