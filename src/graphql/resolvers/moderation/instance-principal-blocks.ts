import { requireActor } from '../../context.js';
import type { QueryResolvers } from '../../generated/resolver-types.js';

export const instancePrincipalBlocks: QueryResolvers['instancePrincipalBlocks'] = (
  _parent,
  args,
  ctx,
) => ctx.services.moderation.blocks.list(requireActor(ctx), args);
