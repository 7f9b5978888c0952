import type { Resolver } from '../../resolver-types.js';

import { requireActor } from '../../context.js';

export const instanceBlockIp: Resolver<
  unknown,
  { cidr: string; reason?: string | null; expiresInDays?: number | null }
> = (_parent, args, ctx) => {
  return ctx.services.ipBlocks.block(requireActor(ctx), {
    cidr: args.cidr,
    reason: args.reason ?? null,
    expiresInDays: args.expiresInDays ?? null,
    // An operator cannot shut their own address out through the API.
    callerAddress: ctx.ip,
  });
};
