import { requireActor } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

export const commandDiscover: Resolver<
  unknown,
  { query: string; context?: { serverId?: string; conversationId?: string } | null; limit?: number }
> = (_parent, args, ctx) =>
  ctx.services.commands.run.discover(requireActor(ctx), args.query, args.context ?? {}, args.limit);
