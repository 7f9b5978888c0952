import type { Resolver } from '../../resolver-types.js';

import { requireActor } from '../../context.js';

export const instancePrincipalBlocks: Resolver = (_parent, _args, ctx) => {
  return ctx.app.services.moderation.blocks.list(requireActor(ctx));
};
