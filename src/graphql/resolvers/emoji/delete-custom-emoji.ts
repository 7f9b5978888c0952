import { requireActor } from '../../context.js';
import type { MutationResolvers } from '../../generated/resolver-types.js';

export const deleteCustomEmoji: MutationResolvers['deleteCustomEmoji'] = (_parent, args, ctx) =>
  ctx.services.emoji.delete(requireActor(ctx), args.serverId, args.name);
