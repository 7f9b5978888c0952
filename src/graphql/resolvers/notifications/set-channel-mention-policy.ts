import { requireActor } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

export const setChannelMentionPolicy: Resolver<
  unknown,
  { serverId: string; policy: string }
> = async (_parent, { serverId, policy }, ctx) =>
  (
    await ctx.services.notifications.setChannelMentionPolicy(requireActor(ctx), serverId, policy)
  ).toUpperCase();
