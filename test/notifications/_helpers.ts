import type { Agent, TestApp } from '../_util/app.js';
import { ok } from '../workspaces/_helpers.js';

export const FEED = `query($after: String, $before: String, $limit: Int, $unread: Boolean, $c: ID) {
  notifications(after: $after, before: $before, limit: $limit, unreadOnly: $unread, conversationId: $c) {
    items { id kind serverId conversationId messageId threadRootId encrypted read createdAt
      actor { id } message { id text } conversation { id } }
    hasMore nextCursor prevCursor unreadCount } }`;

export const SETTINGS_FIELDS = `level keywords timeZone quietHoursStart quietHoursEnd
  doNotDisturbUntil doNotDisturbNow emailDigests rules { serverId conversationId level mutedUntil }`;

export const UPDATE_SETTINGS = `mutation($i: NotificationSettingsInput!) {
  updateNotificationSettings(input: $i) { ${SETTINGS_FIELDS} } }`;

export const SET_RULE = `mutation($i: NotificationRuleInput!) {
  setNotificationRule(input: $i) { serverId conversationId level mutedUntil } }`;

export const COUNTS = `query($id: ID!) { conversation(id: $id) { id unreadCount mentionCount
  notificationRule { level mutedUntil } } }`;

export interface FeedItem {
  id: string;
  kind: string;
  conversationId: string;
  messageId: string;
  threadRootId: string | null;
  encrypted: boolean;
  read: boolean;
  message: { id: string; text: string | null } | null;
}

/** Waits until every queued fan-out is done (they run after the send answered). */
export const settle = (t: TestApp) => t.ctx.services.notifications.settled();

/** The agent's feed after the fan-outs settled. */
export async function feed(
  t: TestApp,
  agent: Agent,
  vars: Record<string, unknown> = {},
): Promise<{
  items: FeedItem[];
  unreadCount: number;
  hasMore: boolean;
  nextCursor: string | null;
  prevCursor: string | null;
}> {
  await settle(t);
  return ok(await t.gql(FEED, vars, agent)).notifications;
}

export async function counts(t: TestApp, agent: Agent, conversationId: string) {
  await settle(t);
  return ok(await t.gql(COUNTS, { id: conversationId }, agent)).conversation as {
    unreadCount: number;
    mentionCount: number;
    notificationRule: { level: string | null; mutedUntil: string | null } | null;
  };
}

export async function generalOf(t: TestApp, agent: Agent, serverId: string): Promise<string> {
  const channels = ok(
    await t.gql('query($s: ID!) { channels(serverId: $s) { id name } }', { s: serverId }, agent),
  ).channels as Array<{ id: string; name: string }>;
  return channels.find((c) => c.name === 'general')!.id;
}
