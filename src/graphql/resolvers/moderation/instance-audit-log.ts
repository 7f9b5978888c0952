import type { Resolver } from '../../resolver-types.js';

import { assertOperator } from './assert-operator.js';

export const instanceAuditLog: Resolver<
  unknown,
  { before?: string | null; after?: string | null; limit?: number | null }
> = (_parent, args, ctx) => {
  assertOperator(ctx);
  return ctx.app.services.moderation.audit.list(args);
};
