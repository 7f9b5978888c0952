import { requireActor } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

export const timeoutMember: Resolver<
  unknown,
  { serverId: string; userId: string; minutes: number }
> = (_parent, { serverId, userId, minutes }, ctx) =>
  ctx.services.workspaces.members.timeoutMember(requireActor(ctx), serverId, userId, minutes);
