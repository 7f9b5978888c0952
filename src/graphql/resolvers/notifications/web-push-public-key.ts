import { requireActor } from '../../context.js';
import type { QueryResolvers } from '../../generated/resolver-types.js';

export const webPushPublicKey: QueryResolvers['webPushPublicKey'] = (_parent, _args, ctx) => {
  requireActor(ctx);
  return ctx.services.webPush.publicKey;
};
