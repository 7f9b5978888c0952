import type { RuleInput } from '../../../services/notifications/index.js';
import { requireActor } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

export const setNotificationRule: Resolver<unknown, { input: RuleInput }> = (
  _parent,
  { input },
  ctx,
) => ctx.services.notifications.setRule(requireActor(ctx), input);
