import type { Resolver } from '../../resolver-types.js';

import { assertOperator } from './assert-operator.js';

export const instanceResolveReport: Resolver<unknown, { id: string }> = (_parent, args, ctx) =>
  ctx.app.services.moderation.reports.resolveInstance(assertOperator(ctx), args.id);
