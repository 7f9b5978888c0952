import { requireActor } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

export const customEmojis: Resolver<unknown, { serverId: string }> = (_parent, args, ctx) =>
  ctx.services.emoji.list(requireActor(ctx), args.serverId);
