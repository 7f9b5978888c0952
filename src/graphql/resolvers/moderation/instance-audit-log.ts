import type { QueryResolvers } from '../../generated/resolver-types.js';

import { requireActor } from '../../context.js';

export const instanceAuditLog: QueryResolvers['instanceAuditLog'] = (_parent, args, ctx) => {
  return ctx.services.moderation.audit.list(requireActor(ctx), args);
};
