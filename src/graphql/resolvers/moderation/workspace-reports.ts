import { requireActor } from '../../context.js';
import type { QueryResolvers } from '../../generated/resolver-types.js';

export const workspaceReports: QueryResolvers['workspaceReports'] = (_parent, args, ctx) =>
  ctx.services.moderation.reports.listWorkspace(requireActor(ctx), args);
