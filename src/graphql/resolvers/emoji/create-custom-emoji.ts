import { requireActor } from '../../context.js';
import type { MutationResolvers } from '../../generated/resolver-types.js';

export const createCustomEmoji: MutationResolvers['createCustomEmoji'] = (
  _parent,
  { input },
  ctx,
) => ctx.services.emoji.create(requireActor(ctx), input);
