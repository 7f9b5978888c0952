import { requireActor } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

export const webPushPublicKey: Resolver = (_parent, _args, ctx) => {
  requireActor(ctx);
  return ctx.services.webPush.publicKey;
};
