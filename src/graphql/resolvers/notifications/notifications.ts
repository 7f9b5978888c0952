import { requireActor } from '../../context.js';
import type { QueryResolvers } from '../../generated/resolver-types.js';

export const notifications: QueryResolvers['notifications'] = (_parent, args, ctx) =>
  ctx.services.notifications.feed(requireActor(ctx), args);
