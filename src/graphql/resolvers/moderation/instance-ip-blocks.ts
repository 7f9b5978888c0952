import type { Resolver } from '../../resolver-types.js';

import { assertOperator } from './assert-operator.js';

export const instanceIpBlocks: Resolver = (_parent, _args, ctx) => {
  assertOperator(ctx);
  return ctx.app.services.ipBlocks.list();
};
