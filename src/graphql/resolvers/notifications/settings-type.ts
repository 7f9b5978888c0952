import {
  doNotDisturb,
  formatClockTime,
  readKeywords,
} from '../../../services/notifications/index.js';
import { requireActor } from '../../context.js';
import type { TypeResolvers } from '../../generated/resolver-types.js';
import { enumName } from '../../resolver-types.js';

export const NotificationSettings: TypeResolvers<'NotificationSettings'> = {
  level: (s) => enumName(s.level),
  keywords: (s) => readKeywords(s.keywords),
  quietHoursStart: (s) => (s.quietStart === null ? null : formatClockTime(s.quietStart)),
  quietHoursEnd: (s) => (s.quietEnd === null ? null : formatClockTime(s.quietEnd)),
  doNotDisturbUntil: (s) => (s.dndUntil === null ? null : new Date(s.dndUntil)),
  doNotDisturbNow: (s, _a, ctx) => doNotDisturb(s, ctx.clock.now().getTime()),
  emailDigests: (s) => s.emailDigests === 1,
  rules: (_s, _a, ctx) => ctx.services.notifications.rules(requireActor(ctx)),
};

export const NotificationRule: TypeResolvers<'NotificationRule'> = {
  serverId: (r) => r.workspaceId,
  level: (r) => (r.level === null ? null : enumName(r.level)),
  mutedUntil: (r) => (r.mutedUntil === null ? null : new Date(r.mutedUntil)),
};
