import type { SettingsInput } from '../../../services/notifications/index.js';
import { requireActor } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

export const updateNotificationSettings: Resolver<unknown, { input: SettingsInput }> = (
  _parent,
  { input },
  ctx,
) => ctx.services.notifications.updateSettings(requireActor(ctx), input);
