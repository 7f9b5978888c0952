import type { KeysetArgs } from '../../../services/paging/index.js';
import { requireActor } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

export const workspaceReports: Resolver<
  unknown,
  KeysetArgs & { serverId: string; openOnly?: boolean | null }
> = (_parent, args, ctx) => ctx.services.moderation.reports.listWorkspace(requireActor(ctx), args);
