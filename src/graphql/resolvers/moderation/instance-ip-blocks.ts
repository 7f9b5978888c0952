import type { Resolver } from '../../resolver-types.js';

import { requireActor } from '../../context.js';

export const instanceIpBlocks: Resolver = (_parent, _args, ctx) => {
  return ctx.services.ipBlocks.list(requireActor(ctx));
};
