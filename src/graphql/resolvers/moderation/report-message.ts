import { requireActor } from '../../context.js';
import type { MutationResolvers } from '../../generated/resolver-types.js';

export const reportMessage: MutationResolvers['reportMessage'] = (_parent, args, ctx) =>
  ctx.services.moderation.reports.reportMessage(requireActor(ctx), args);
