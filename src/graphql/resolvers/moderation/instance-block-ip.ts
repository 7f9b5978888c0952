import { actorId } from '../../../services/moderation/actor.js';
import type { Resolver } from '../../resolver-types.js';

import { assertOperator } from './assert-operator.js';

export const instanceBlockIp: Resolver<
  unknown,
  { cidr: string; reason?: string | null; expiresInDays?: number | null }
> = (_parent, args, ctx) => {
  const actor = assertOperator(ctx);
  return ctx.app.services.ipBlocks.block({
    cidr: args.cidr,
    reason: args.reason ?? null,
    expiresInDays: args.expiresInDays ?? null,
    actor: actorId(actor),
    // An operator cannot shut their own address out through the API.
    callerAddress: ctx.ip,
  });
};
