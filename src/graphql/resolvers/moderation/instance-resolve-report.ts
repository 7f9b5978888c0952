import type { MutationResolvers } from '../../generated/resolver-types.js';

import { requireActor } from '../../context.js';

export const instanceResolveReport: MutationResolvers['instanceResolveReport'] = (
  _parent,
  args,
  ctx,
) => ctx.services.moderation.reports.resolveInstance(requireActor(ctx), args.id);
