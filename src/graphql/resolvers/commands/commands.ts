import { requireActor } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

export const commands: Resolver<
  unknown,
  { surface: string; context?: { serverId?: string; conversationId?: string } | null }
> = (_parent, args, ctx) =>
  ctx.services.commands.run.list(requireActor(ctx), args.surface, args.context ?? {});
