import { requireActor } from '../../context.js';
import type { QueryResolvers } from '../../generated/resolver-types.js';

export const notificationSettings: QueryResolvers['notificationSettings'] = (_parent, _args, ctx) =>
  ctx.services.notifications.settings(requireActor(ctx));
