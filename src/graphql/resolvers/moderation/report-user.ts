import { requireActor } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

export const reportUser: Resolver<
  unknown,
  { userId: string; category: string; text?: string | null }
> = (_parent, args, ctx) => ctx.services.moderation.reports.reportUser(requireActor(ctx), args);
