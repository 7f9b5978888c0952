import type { Resolver } from '../../resolver-types.js';

import { assertOperator } from './assert-operator.js';

export const instanceUnblockPrincipal: Resolver<unknown, { principalId: string }> = (
  _parent,
  args,
  ctx,
) => ctx.app.services.moderation.blocks.unblock(assertOperator(ctx), args.principalId);
