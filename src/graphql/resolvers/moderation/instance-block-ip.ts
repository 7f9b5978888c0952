import type { MutationResolvers } from '../../generated/resolver-types.js';

import { requireActor } from '../../context.js';

export const instanceBlockIp: MutationResolvers['instanceBlockIp'] = (_parent, args, ctx) => {
  return ctx.services.ipBlocks.block(requireActor(ctx), {
    cidr: args.cidr,
    reason: args.reason ?? null,
    expiresInDays: args.expiresInDays ?? null,
    // An operator cannot shut their own address out through the API.
    callerAddress: ctx.ip,
  });
};
