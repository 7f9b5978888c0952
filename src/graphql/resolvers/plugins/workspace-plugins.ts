import { requireActor } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

export const workspacePlugins: Resolver<unknown, { serverId: string }> = (_parent, args, ctx) =>
  ctx.services.plugins.list(requireActor(ctx), args.serverId);
