// Row types of notifications (services/notifications). Timestamps in ms; booleans 0/1.

/** `all`, `mentions` or `nothing` (docs/notifications.md, "Levels"). */
export type NotificationLevelValue = 'all' | 'mentions' | 'nothing';

export interface NotificationSettingTable {
  accountId: string;
  /** The default level for channels. */
  level: NotificationLevelValue;
  /** JSON array of lower-case keywords. */
  keywords: string;
  /** IANA time zone of the quiet hours (`UTC` by default). */
  timeZone: string;
  /** Quiet hours in minutes after local midnight; both null when none. */
  quietStart: number | null;
  quietEnd: number | null;
  /** Do not disturb until then (push held back); null when off. */
  dndUntil: number | null;
  /** 1 while mail digests are wanted (the unsubscribe link sets 0). */
  emailDigests: number;
  lastDigestAt: number | null;
  updatedAt: number;
}

export interface NotificationRuleTable {
  /** The workspace id of a workspace rule, the conversation id of a conversation rule. */
  scopeId: string;
  accountId: string;
  workspaceId: string;
  conversationId: string | null;
  /** Null: the wider scope's level applies. */
  level: NotificationLevelValue | null;
  /** Muted (nothing) until then; null when not muted. */
  mutedUntil: number | null;
  updatedAt: number;
}

/** Why a notification was made. */
export type NotificationKindValue =
  'mention' | 'channel' | 'keyword' | 'thread_reply' | 'direct' | 'message';

export interface NotificationTable {
  id: string;
  accountId: string;
  kind: NotificationKindValue;
  messageId: string;
  conversationId: string;
  workspaceId: string;
  threadRootId: string | null;
  actorId: string | null;
  /** The message's time. */
  createdAt: number;
  readAt: number | null;
  /** When a mail digest carried it; null until then. */
  mailedAt: number | null;
}

export interface WorkspaceNotificationPolicyTable {
  workspaceId: string;
  /** Who may use @channel and @here: `everyone`, `moderators` or `nobody`. */
  channelMentions: 'everyone' | 'moderators' | 'nobody';
  updatedAt: number;
}

export interface PushSubscriptionTable {
  id: string;
  accountId: string;
  endpoint: string;
  /** The browser's P-256 public key, base64url (RFC 8291 `ua_public`). */
  p256dh: string;
  /** The 16-byte authentication secret, base64url. */
  auth: string;
  createdAt: number;
  lastSuccessAt: number | null;
}
