import { requireActor } from '../../context.js';
import type { TypeResolvers } from '../../generated/resolver-types.js';
import { enumName } from '../../resolver-types.js';

// The service answers views (services/notifications/views.ts); these fields only name the enums
// and load the rules.

export const NotificationSettings: TypeResolvers<'NotificationSettings'> = {
  level: (s) => enumName(s.level),
  rules: (_s, _a, ctx) => ctx.services.notifications.rules(requireActor(ctx)),
};

export const NotificationRule: TypeResolvers<'NotificationRule'> = {
  level: (r) => (r.level === null ? null : enumName(r.level)),
};
