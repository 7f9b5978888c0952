import type { Resolver } from '../../resolver-types.js';

import { requireActor } from '../../context.js';

export const instanceAuditLog: Resolver<
  unknown,
  { before?: string | null; after?: string | null; limit?: number | null }
> = (_parent, args, ctx) => {
  return ctx.services.moderation.audit.list(requireActor(ctx), args);
};
