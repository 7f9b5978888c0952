import { requireActor } from '../../context.js';
import type { MutationResolvers } from '../../generated/resolver-types.js';

export const registerPushSubscription: MutationResolvers['registerPushSubscription'] = (
  _parent,
  { input },
  ctx,
) => ctx.services.webPush.subscribe(requireActor(ctx), input);

export const unregisterPushSubscription: MutationResolvers['unregisterPushSubscription'] = (
  _parent,
  { endpoint },
  ctx,
) => ctx.services.webPush.unsubscribe(requireActor(ctx), endpoint);
