import type { Resolver } from '../../resolver-types.js';

import { requireActor } from '../../context.js';

export const instancePrincipalBlocks: Resolver = (_parent, _args, ctx) => {
  return ctx.services.moderation.blocks.list(requireActor(ctx));
};
