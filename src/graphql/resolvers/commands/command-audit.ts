import { requireActor } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

export const commandAudit: Resolver<
  unknown,
  { serverId: string; before?: string | null; after?: string | null; limit?: number | null }
> = (_parent, args, ctx) =>
  ctx.services.commands.run.auditPage(requireActor(ctx), args.serverId, args);
