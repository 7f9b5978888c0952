import type { CreateChannelInput } from '../../../services/channels/index.js';
import { requireActor } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

export const createChannel: Resolver<unknown, { input: CreateChannelInput }> = (
  _parent,
  { input },
  ctx,
) => ctx.services.channels.create(requireActor(ctx), input);
