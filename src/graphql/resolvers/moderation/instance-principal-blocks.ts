import type { Resolver } from '../../resolver-types.js';

import { assertOperator } from './assert-operator.js';

export const instancePrincipalBlocks: Resolver = (_parent, _args, ctx) => {
  assertOperator(ctx);
  return ctx.app.services.moderation.blocks.list();
};
