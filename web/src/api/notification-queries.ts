// The notification documents (docs/notifications.md): the feed, settings, rules and Web Push.

import { CONVERSATION, MESSAGE, USER } from './queries.ts';

export const NOTIFICATION = `id kind serverId conversationId messageId threadRootId encrypted
  createdAt read actor { ${USER} } message { ${MESSAGE} } conversation { ${CONVERSATION} }`;

export const NOTIFICATIONS = `query Notifications($before: String, $unreadOnly: Boolean) {
  notifications(before: $before, limit: 30, unreadOnly: $unreadOnly) {
  items { ${NOTIFICATION} } hasMore nextCursor unreadCount } }`;
export const UNREAD_IN_CONVERSATION = `query UnreadNotificationsIn($id: ID!) {
  notifications(limit: 100, unreadOnly: true, conversationId: $id) { items { id threadRootId } } }`;
export const UNREAD_NOTIFICATIONS = `query UnreadNotifications { notifications(limit: 1, unreadOnly: true) { unreadCount } }`;
export const MARK_NOTIFICATION_READ = `mutation MarkNotificationRead($id: ID!) { markNotificationRead(id: $id) { id read } }`;
export const MARK_ALL_NOTIFICATIONS_READ = `mutation MarkAllNotificationsRead { markAllNotificationsRead }`;
export const MARK_CONVERSATION_NOTIFICATIONS_READ = `mutation MarkConversationNotificationsRead($id: ID!) {
  markConversationNotificationsRead(conversationId: $id) }`;

export const RULE = `serverId conversationId level mutedUntil`;
export const SETTINGS = `level keywords timeZone quietHoursStart quietHoursEnd doNotDisturbUntil
  doNotDisturbNow emailDigests rules { ${RULE} }`;
export const NOTIFICATION_SETTINGS = `query NotificationSettings { notificationSettings { ${SETTINGS} } }`;
export const UPDATE_NOTIFICATION_SETTINGS = `mutation UpdateNotificationSettings($input: NotificationSettingsInput!) {
  updateNotificationSettings(input: $input) { ${SETTINGS} } }`;
export const SET_NOTIFICATION_RULE = `mutation SetNotificationRule($input: NotificationRuleInput!) {
  setNotificationRule(input: $input) { ${RULE} } }`;

export const WEB_PUSH_KEY = `query WebPushPublicKey { webPushPublicKey }`;
export const REGISTER_PUSH = `mutation RegisterPushSubscription($input: PushSubscriptionInput!) {
  registerPushSubscription(input: $input) }`;
export const UNREGISTER_PUSH = `mutation UnregisterPushSubscription($endpoint: String!) {
  unregisterPushSubscription(endpoint: $endpoint) }`;
