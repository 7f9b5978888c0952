// The notifications area's surface: what other areas and the edges use of it (docs/architecture.md,
// "Area surfaces"). The area's own files import each other directly, never this file.
export type { DigestMailer } from './digest.js';
export type { NotificationService, RuleInput, SettingsInput } from './notification-service.js';
export type { WebPush } from './push.js';
export type { FeedRow } from './queries.js';
export { doNotDisturb, formatClockTime, readKeywords } from './rules.js';
export { buildNotifications } from './wiring.js';
export type { NotificationRuleView } from './views.js';
export type { NotificationSettingsView } from './views.js';
