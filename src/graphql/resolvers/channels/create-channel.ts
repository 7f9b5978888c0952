import { requireActor } from '../../context.js';
import type { MutationResolvers } from '../../generated/resolver-types.js';

export const createChannel: MutationResolvers['createChannel'] = (_parent, { input }, ctx) =>
  ctx.services.channels.create(requireActor(ctx), input);
