import { requireActor } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

export const pipelines: Resolver<unknown, { serverId: string }> = (_parent, args, ctx) =>
  ctx.services.commands.pipelines.list(requireActor(ctx), args.serverId);
