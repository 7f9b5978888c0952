import { requireActor } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

export const resolveWorkspaceReport: Resolver<unknown, { id: string }> = (_parent, args, ctx) =>
  ctx.services.moderation.reports.resolveWorkspace(requireActor(ctx), args.id);
