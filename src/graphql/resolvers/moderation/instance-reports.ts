import type { Resolver } from '../../resolver-types.js';

import { assertOperator } from './assert-operator.js';

export const instanceReports: Resolver<
  unknown,
  { openOnly?: boolean | null; after?: string | null; limit?: number | null }
> = (_parent, args, ctx) => {
  assertOperator(ctx);
  return ctx.app.services.moderation.reports.listInstance(args);
};
