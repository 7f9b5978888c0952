import { requireActor } from '../../context.js';
import type { MutationResolvers } from '../../generated/resolver-types.js';

export const resolveWorkspaceReport: MutationResolvers['resolveWorkspaceReport'] = (
  _parent,
  args,
  ctx,
) => ctx.services.moderation.reports.resolveWorkspace(requireActor(ctx), args.id);
