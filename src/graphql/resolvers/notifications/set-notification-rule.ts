import { requireActor } from '../../context.js';
import type { MutationResolvers } from '../../generated/resolver-types.js';

export const setNotificationRule: MutationResolvers['setNotificationRule'] = (
  _parent,
  { input },
  ctx,
) => ctx.services.notifications.setRule(requireActor(ctx), input);
