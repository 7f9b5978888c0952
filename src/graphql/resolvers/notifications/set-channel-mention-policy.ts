import { requireActor } from '../../context.js';
import type { MutationResolvers } from '../../generated/resolver-types.js';
import { enumName } from '../../resolver-types.js';

export const setChannelMentionPolicy: MutationResolvers['setChannelMentionPolicy'] = async (
  _parent,
  { serverId, policy },
  ctx,
) =>
  enumName(
    await ctx.services.notifications.setChannelMentionPolicy(requireActor(ctx), serverId, policy),
  );
