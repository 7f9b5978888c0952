import { requireActor } from '../../context.js';
import type { QueryResolvers } from '../../generated/resolver-types.js';

export const commandAudit: QueryResolvers['commandAudit'] = (_parent, args, ctx) =>
  ctx.services.commands.run.auditPage(requireActor(ctx), args.serverId, args);
