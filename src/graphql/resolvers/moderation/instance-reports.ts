import type { KeysetArgs } from '../../../services/paging/index.js';
import type { Resolver } from '../../resolver-types.js';

import { requireActor } from '../../context.js';

export const instanceReports: Resolver<unknown, KeysetArgs & { openOnly?: boolean | null }> = (
  _parent,
  args,
  ctx,
) => {
  return ctx.services.moderation.reports.listInstance(requireActor(ctx), args);
};
