import type { LinkPreviewTable } from '../db/tables/link-previews.js';

import type { BusEvent } from './bus.js';

// The event catalog (docs/events.md explains each kind and its payload). Topics:
//   workspace:<workspaceId>  events of one workspace, filtered per subscriber by `audience`
//   user:<accountId>         one person's own events across every space (relayStream)

export const workspaceTopic = (workspaceId: string) => `workspace:${workspaceId}`;
export const userTopic = (accountId: string) => `user:${accountId}`;

/**
 * Who of a workspace topic's subscribers may see an event:
 * - `workspace`: every member (guests included);
 * - `channel`: a public channel's event: every non-guest member, and guests who are in it;
 * - `conversation`: only members of the conversation (private channels, DMs, groups);
 * - `users`: only the listed accounts (e.g. MemberLeft to the member themself).
 */
export type Audience =
  | { kind: 'workspace' }
  | { kind: 'channel'; conversationId: string }
  | { kind: 'conversation'; conversationId: string }
  | { kind: 'users'; userIds: string[] };

/** Payload every catalog event carries besides its own fields. */
export interface EventPayload {
  audience: Audience;
  /** The workspace (serverId) the event belongs to; the direct space for DMs. */
  serverId: string;
  /** Set for events about one conversation; per-conversation order is kept. */
  conversationId?: string;
  [field: string]: unknown;
}

export type CatalogEvent = BusEvent<EventPayload>;

/** Every event kind, as written in docs/events.md. */
export const EVENT_TYPES = [
  // workspaces and members
  'WorkspaceUpdated',
  'WorkspaceDeleted',
  'MemberJoined',
  'MemberLeft',
  'MemberRoleChanged',
  'MemberTimedOut',
  // workspace plugins
  'WorkspacePluginAdded',
  'WorkspacePluginUpdated',
  'WorkspacePluginRemoved',
  // a workspace's macros and default keybinds
  'WorkspaceMacroCreated',
  'WorkspaceMacroDeleted',
  'WorkspaceKeybindSet',
  'WorkspaceKeybindDeleted',
  // channels and conversations
  'ChannelCreated',
  'ChannelUpdated',
  'ChannelArchived',
  'ChannelUnarchived',
  'ConversationCreated',
  'ConversationUpdated',
  'MemberAddedToConversation',
  'MemberRemovedFromConversation',
  'MlsMembershipChanged',
  'MlsCommitAdded',
  'MlsWelcomeAvailable',
  'MlsKeyPackagesLow',
  // messages
  'MessageCreated',
  'MessageEdited',
  'MessageDeleted',
  'MessageAttachmentAdded',
  'MessageUpdated',
  'ReactionAdded',
  'ReactionRemoved',
  'MessagePinned',
  'MessageUnpinned',
  'ReadMarkerUpdated',
  // direct messages and people
  'DmRequestReceived',
  'DmRequestAnswered',
  'TypingStarted',
  'PresenceChanged',
  'PresencesChanged',
  // account
  'SessionEnded',
  'AccountUpdated',
  // notifications (docs/notifications.md)
  'NotificationCreated',
  'NotificationsRead',
] as const;

export type EventType = (typeof EVENT_TYPES)[number];

// Payloads by kind, as docs/events.md lists them. Every payload also carries the routing fields
// of `EventPayload`; times are RFC 3339 strings, roles lower case.

/** `owner`, `moderator`, `member` or `guest` (rows keep roles as text). */
type Role = string;

/** Mentions of a message: account and channel ids, and whether `@here` or `@channel` was used. */
export interface MentionsPayload {
  users: string[];
  channels: string[];
  here: boolean;
  /** `@channel` or `@everyone` (absent in messages stored before it was parsed). */
  channel?: boolean;
}

/** A message as `MessageCreated` carries it. */
/** An attachment as `Message.attachments` lists it (docs/files.md). */
export interface AttachmentPayload {
  id: string;
  fileName: string;
  contentType: string;
  sizeBytes: number;
  width: number | null;
  height: number | null;
  url: string;
}

export interface MessagePayload {
  id: string;
  conversationId: string;
  serverId: string;
  authorId: string;
  text: string | null;
  threadRootId: string | null;
  forwardedFromId: string | null;
  createdAt: string;
  editedAt: string | null;
  mentions: MentionsPayload;
  [field: string]: unknown;
}

/**
 * A link preview as `MessageUpdated` carries it (the GraphQL `LinkPreview` fields): its stored
 * columns as they stand, `kind` one of the two kinds.
 */
export interface LinkPreviewPayload extends Pick<
  LinkPreviewTable,
  'url' | 'title' | 'description' | 'imageUrl' | 'siteName' | 'mimeType' | 'size'
> {
  kind: 'page' | 'image';
}

/** Event kind -> its own payload fields, besides the routing ones (docs/events.md). */
export interface EventFields {
  WorkspaceUpdated: {
    updatedBy: string;
    name?: string;
    description?: string | null;
  };
  WorkspaceDeleted: { deletedBy: string | null };
  MemberJoined: {
    userId: string;
    role: Role;
    channelIds: string[];
    inviteId: string | null;
  };
  MemberLeft: {
    userId: string;
    reason: 'left' | 'removed' | 'workspaceDeleted';
    removedBy?: string;
  };
  MemberRoleChanged: {
    userId: string;
    role: Role;
    previousRole: Role;
    changedBy: string;
  };
  MemberTimedOut: { userId: string; until: string | null; by: string };
  WorkspacePluginAdded: {
    workspacePluginId: string;
    pluginId: string;
    version: string;
    bundleSha256: string;
    enabled: boolean;
    by: string;
  };
  WorkspacePluginUpdated: {
    workspacePluginId: string;
    pluginId: string;
    version: string;
    bundleSha256: string;
    enabled: boolean;
    /** What changed: `enabled`, `bundle`, `settings`. */
    changed: string[];
    by: string;
  };
  WorkspacePluginRemoved: { workspacePluginId: string; pluginId: string; by: string };
  WorkspaceMacroCreated: { macroId: string; name: string; by: string };
  WorkspaceMacroDeleted: { macroId: string; name: string; by: string };
  /** `replacedId`: the keybind of the same chord this one replaced, if any. */
  WorkspaceKeybindSet: { keybindId: string; chord: string; replacedId: string | null; by: string };
  WorkspaceKeybindDeleted: { keybindId: string; chord: string; by: string };
  ChannelCreated: {
    name: string;
    topic: string | null;
    isPrivate: boolean;
    createdBy: string;
    memberIds: string[];
  };
  ChannelUpdated: { updatedBy: string; name?: string; topic?: string | null };
  ChannelArchived: { by: string };
  ChannelUnarchived: { by: string };
  ConversationCreated: {
    /** `direct` or `group`. */
    kind: string;
    name: string | null;
    encrypted: boolean;
    createdBy: string;
    memberIds: string[];
    pendingMemberIds: string[];
    createdAt: string;
  };
  ConversationUpdated: Record<never, never>;
  MemberAddedToConversation: {
    userId: string;
    addedBy: string | null;
    state?: 'pending' | 'member';
  };
  MemberRemovedFromConversation: {
    userId: string;
    removedBy: string | null;
    reason?: 'inviteDeclined' | 'left';
  };
  MlsMembershipChanged: { added: string[]; removed: string[] };
  /** A Commit the server accepted, made in `epoch` (the group is at `epoch + 1` after it). */
  MlsCommitAdded: {
    incarnation: number;
    epoch: number;
    /** The MLSMessage carrying the Commit, base64url. */
    commit: string;
    committedBy: string;
    deviceId: string | null;
    addedDeviceIds: string[];
    removedDeviceIds: string[];
  };
  /** Welcomes wait for these devices (`mlsWelcomes`), joining at `epoch`. */
  MlsWelcomeAvailable: { incarnation: number; epoch: number; deviceIds: string[] };
  /** A device's unclaimed key packages fell below the low mark: publish more. */
  MlsKeyPackagesLow: { deviceId: string; remaining: number };
  MessageCreated: { message: MessagePayload };
  MessageEdited: {
    messageId: string;
    text: string | null;
    editedAt: string;
    mentions: MentionsPayload;
  };
  MessageDeleted: {
    messageId: string;
    threadRootId: string | null;
    deletedBy: string;
  };
  MessageAttachmentAdded: { messageId: string; attachment: AttachmentPayload };
  /** Fields kept beside the message changed; today only its link previews (all of them). */
  MessageUpdated: { messageId: string; linkPreviews: LinkPreviewPayload[] };
  ReactionAdded: { messageId: string; emoji: string; userId: string };
  ReactionRemoved: { messageId: string; emoji: string; userId: string };
  MessagePinned: { messageId: string; pinnedBy: string; pinnedAt: string };
  MessageUnpinned: { messageId: string; unpinnedBy: string };
  ReadMarkerUpdated: { userId: string; messageId: string; readAt: string };
  DmRequestReceived: {
    requestId: string;
    fromId: string;
    toId: string;
    createdAt: string;
  };
  DmRequestAnswered: {
    requestId: string;
    fromId: string;
    toId: string;
    state: 'accepted' | 'declined';
  };
  TypingStarted: {
    user_id: string;
    username: string;
    display_name: string | null;
  };
  PresenceChanged: { userId: string; status: 'ONLINE' | 'AWAY' | 'OFFLINE' };
  PresencesChanged: {
    changes: Array<{ userId: string; status: 'ONLINE' | 'AWAY' | 'OFFLINE' }>;
  };
  SessionEnded: Record<never, never>;
  /** What others see of the account changed: its display name (null when cleared). */
  AccountUpdated: { userId: string; displayName: string | null };
  NotificationCreated: { notification: NotificationPayload };
  /** One notification (`notificationId`), a conversation's, or all of them were read. */
  NotificationsRead: { notificationId: string | null; all: boolean };
}

/** A notification as `NotificationCreated` carries it: metadata, never message text. */
export interface NotificationPayload {
  id: string;
  /** `MENTION`, `CHANNEL`, `KEYWORD`, `THREAD_REPLY`, `DIRECT` or `MESSAGE`. */
  kind: string;
  messageId: string;
  conversationId: string;
  serverId: string;
  threadRootId: string | null;
  actorId: string | null;
  encrypted: boolean;
  createdAt: string;
}

/** Event kind -> payload type: the routing fields and the kind's own. */
export type EventMap = { [K in keyof EventFields]: EventPayload & EventFields[K] };

// Every kind of EVENT_TYPES has a payload type, and nothing else does.
type Exact<A, B> = [A] extends [B] ? ([B] extends [A] ? true : never) : never;
export const eventMapCoversCatalog: Exact<keyof EventMap, EventType> = true;
