import { requireActor } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

export const registerPushSubscription: Resolver<
  unknown,
  { input: { endpoint: string; p256dh: string; auth: string } }
> = (_parent, { input }, ctx) => ctx.services.webPush.subscribe(requireActor(ctx), input);

export const unregisterPushSubscription: Resolver<unknown, { endpoint: string }> = (
  _parent,
  { endpoint },
  ctx,
) => ctx.services.webPush.unsubscribe(requireActor(ctx), endpoint);
