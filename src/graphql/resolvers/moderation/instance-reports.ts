import type { QueryResolvers } from '../../generated/resolver-types.js';

import { requireActor } from '../../context.js';

export const instanceReports: QueryResolvers['instanceReports'] = (_parent, args, ctx) => {
  return ctx.services.moderation.reports.listInstance(requireActor(ctx), args);
};
