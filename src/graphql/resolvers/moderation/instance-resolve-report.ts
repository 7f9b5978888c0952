import type { Resolver } from '../../resolver-types.js';

import { requireActor } from '../../context.js';

export const instanceResolveReport: Resolver<unknown, { id: string }> = (_parent, args, ctx) =>
  ctx.services.moderation.reports.resolveInstance(requireActor(ctx), args.id);
