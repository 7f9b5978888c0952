import { requireActor } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

export const keybinds: Resolver<unknown, { serverId?: string | null }> = (_parent, args, ctx) =>
  ctx.services.commands.keybinds.list(requireActor(ctx), args.serverId);
