import type {
  NotificationRuleTable,
  NotificationSettingTable,
} from '../../../db/tables/notifications.js';
import {
  doNotDisturb,
  formatClockTime,
  readKeywords,
} from '../../../services/notifications/index.js';
import { requireActor } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

type R = Resolver<NotificationSettingTable>;

export const NotificationSettings = {
  level: ((s) => s.level.toUpperCase()) as R,
  keywords: ((s) => readKeywords(s.keywords)) as R,
  quietHoursStart: ((s) => (s.quietStart === null ? null : formatClockTime(s.quietStart))) as R,
  quietHoursEnd: ((s) => (s.quietEnd === null ? null : formatClockTime(s.quietEnd))) as R,
  doNotDisturbUntil: ((s) => (s.dndUntil === null ? null : new Date(s.dndUntil))) as R,
  doNotDisturbNow: ((s, _a, ctx) => doNotDisturb(s, ctx.clock.now().getTime())) as R,
  emailDigests: ((s) => s.emailDigests === 1) as R,
  rules: ((_s, _a, ctx) => ctx.services.notifications.rules(requireActor(ctx))) as R,
};

type RR = Resolver<NotificationRuleTable>;

export const NotificationRule = {
  serverId: ((r) => r.workspaceId) as RR,
  level: ((r) => r.level?.toUpperCase() ?? null) as RR,
  mutedUntil: ((r) => (r.mutedUntil === null ? null : new Date(r.mutedUntil))) as RR,
};
