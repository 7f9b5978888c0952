import { requireActor } from '../../context.js';
import type { MutationResolvers } from '../../generated/resolver-types.js';

export const updateNotificationSettings: MutationResolvers['updateNotificationSettings'] = (
  _parent,
  { input },
  ctx,
) => ctx.services.notifications.updateSettings(requireActor(ctx), input);
