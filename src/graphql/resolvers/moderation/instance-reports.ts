import type { Resolver } from '../../resolver-types.js';

import { requireActor } from '../../context.js';

export const instanceReports: Resolver<
  unknown,
  { openOnly?: boolean | null; after?: string | null; limit?: number | null }
> = (_parent, args, ctx) => {
  return ctx.services.moderation.reports.listInstance(requireActor(ctx), args);
};
