import { requireActor } from '../../context.js';
import type { MutationResolvers } from '../../generated/resolver-types.js';

export const reportWorkspace: MutationResolvers['reportWorkspace'] = (_parent, args, ctx) =>
  ctx.services.moderation.reports.reportWorkspace(requireActor(ctx), args);
