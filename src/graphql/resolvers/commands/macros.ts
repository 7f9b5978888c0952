import { requireActor } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

export const macros: Resolver<unknown, { serverId?: string | null }> = (_parent, args, ctx) =>
  ctx.services.commands.macros.list(requireActor(ctx), args.serverId);
