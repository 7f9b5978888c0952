import { requireSession } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

export const timeoutMember: Resolver<
  unknown,
  { serverId: string; userId: string; minutes: number }
> = (_parent, { serverId, userId, minutes }, ctx) =>
  ctx.app.services.workspaces.timeoutMember(
    requireSession(ctx).accountId,
    serverId,
    userId,
    minutes,
  );
