import { requireActor } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

export const reportWorkspace: Resolver<
  unknown,
  { serverId: string; category: string; text?: string | null }
> = (_parent, args, ctx) =>
  ctx.services.moderation.reports.reportWorkspace(requireActor(ctx), args);
