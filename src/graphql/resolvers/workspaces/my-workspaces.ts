import { requireActor } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

export const myWorkspaces: Resolver = (_parent, _args, ctx) =>
  ctx.services.workspaces.listMine(requireActor(ctx));
