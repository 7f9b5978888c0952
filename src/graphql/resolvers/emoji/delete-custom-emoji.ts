import { requireActor } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

export const deleteCustomEmoji: Resolver<unknown, { serverId: string; name: string }> = (
  _parent,
  args,
  ctx,
) => ctx.services.emoji.delete(requireActor(ctx), args.serverId, args.name);
