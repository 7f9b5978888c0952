import type {
  NotificationLevelValue,
  NotificationRuleTable,
  NotificationSettingTable,
} from '../../db/tables/notifications.js';

import { doNotDisturb, formatClockTime, readKeywords } from './rules.js';

// The notification settings and rules as the API answers them (NotificationSettings,
// NotificationRule): rows stop here, so the resolvers see booleans and the API's names.

/** A person's notification settings; times in milliseconds. */
export interface NotificationSettingsView {
  level: NotificationLevelValue;
  keywords: string[];
  timeZone: string;
  /** `HH:MM` in `timeZone`; both null when there are no quiet hours. */
  quietHoursStart: string | null;
  quietHoursEnd: string | null;
  doNotDisturbUntil: number | null;
  /** Whether do-not-disturb holds at the time the view was made. */
  doNotDisturbNow: boolean;
  emailDigests: boolean;
}

/** A person's rule for a workspace or a conversation. */
export interface NotificationRuleView {
  serverId: string;
  /** Null for a workspace rule. */
  conversationId: string | null;
  /** Null: the wider scope's level applies. */
  level: NotificationLevelValue | null;
  mutedUntil: number | null;
}

export function toSettingsView(
  row: NotificationSettingTable,
  now: number,
): NotificationSettingsView {
  return {
    level: row.level,
    keywords: readKeywords(row.keywords),
    timeZone: row.timeZone,
    quietHoursStart: row.quietStart === null ? null : formatClockTime(row.quietStart),
    quietHoursEnd: row.quietEnd === null ? null : formatClockTime(row.quietEnd),
    doNotDisturbUntil: row.dndUntil,
    doNotDisturbNow: doNotDisturb(row, now),
    emailDigests: row.emailDigests === 1,
  };
}

export function toRuleView(row: NotificationRuleTable): NotificationRuleView {
  return {
    serverId: row.workspaceId,
    conversationId: row.conversationId,
    level: row.level,
    mutedUntil: row.mutedUntil,
  };
}
