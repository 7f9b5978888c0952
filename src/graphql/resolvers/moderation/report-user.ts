import { requireActor } from '../../context.js';
import type { MutationResolvers } from '../../generated/resolver-types.js';

export const reportUser: MutationResolvers['reportUser'] = (_parent, args, ctx) =>
  ctx.services.moderation.reports.reportUser(requireActor(ctx), args);
