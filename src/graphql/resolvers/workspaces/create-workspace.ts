import { requireActor } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

export const createWorkspace: Resolver<
  unknown,
  { input: { name: string; description?: string | null } }
> = (_parent, { input }, ctx) => ctx.services.workspaces.lifecycle.create(requireActor(ctx), input);
