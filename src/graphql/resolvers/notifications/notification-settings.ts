import { requireActor } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

export const notificationSettings: Resolver = (_parent, _args, ctx) =>
  ctx.services.notifications.settings(requireActor(ctx));
