import { requireActor } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

export const workspaceReports: Resolver<
  unknown,
  { serverId: string; openOnly?: boolean | null; after?: string | null; limit?: number | null }
> = (_parent, args, ctx) => ctx.services.moderation.reports.listWorkspace(requireActor(ctx), args);
