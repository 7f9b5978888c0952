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
  // messages
  'MessageCreated',
  'MessageEdited',
  'MessageDeleted',
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
  // account
  'SessionEnded',
  'AccountUpdated',
] as const;

export type EventType = (typeof EVENT_TYPES)[number];

// Payloads by kind, as docs/events.md lists them. Every payload also carries the routing fields
// of `EventPayload`; times are RFC 3339 strings, roles lower case.

type Role = 'owner' | 'moderator' | 'member' | 'guest';

/** Routing fields of an event about one conversation. */
interface ConversationRouting extends EventPayload {
  conversationId: string;
}

/** Mentions of a message: account and channel ids, and whether `@here` was used. */
export interface MentionsPayload {
  users: string[];
  channels: string[];
  here: boolean;
}

/** A message as `MessageCreated` carries it. */
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

/** Event kind -> payload type (docs/events.md). */
export interface EventMap {
  WorkspaceUpdated: EventPayload & { updatedBy: string; name?: string; description?: string };
  WorkspaceDeleted: EventPayload & { deletedBy: string | null };
  MemberJoined: EventPayload & {
    userId: string;
    role: Role;
    channelIds: string[];
    inviteId: string | null;
  };
  MemberLeft: EventPayload & {
    userId: string;
    reason: 'left' | 'removed' | 'workspaceDeleted';
    removedBy?: string;
  };
  MemberRoleChanged: EventPayload & {
    userId: string;
    role: Role;
    previousRole: Role;
    changedBy: string;
  };
  MemberTimedOut: EventPayload & { userId: string; until: string | null; by: string };
  ChannelCreated: ConversationRouting & {
    name: string;
    topic: string | null;
    isPrivate: boolean;
    createdBy: string;
    memberIds: string[];
  };
  ChannelUpdated: ConversationRouting & { updatedBy: string; name?: string; topic?: string | null };
  ChannelArchived: ConversationRouting & { by: string };
  ChannelUnarchived: ConversationRouting & { by: string };
  ConversationCreated: ConversationRouting & {
    kind: 'direct' | 'group';
    name: string | null;
    encrypted: boolean;
    createdBy: string;
    memberIds: string[];
    pendingMemberIds: string[];
    createdAt: string;
  };
  ConversationUpdated: ConversationRouting;
  MemberAddedToConversation: ConversationRouting & {
    userId: string;
    addedBy: string | null;
    state?: 'pending' | 'member';
  };
  MemberRemovedFromConversation: ConversationRouting & {
    userId: string;
    removedBy: string | null;
    reason?: 'inviteDeclined' | 'left';
  };
  MlsMembershipChanged: ConversationRouting & { added: string[]; removed: string[] };
  MessageCreated: ConversationRouting & { message: MessagePayload };
  MessageEdited: ConversationRouting & {
    messageId: string;
    text: string | null;
    editedAt: string;
    mentions: MentionsPayload;
  };
  MessageDeleted: ConversationRouting & {
    messageId: string;
    threadRootId: string | null;
    deletedBy: string;
  };
  ReactionAdded: ConversationRouting & { messageId: string; emoji: string; userId: string };
  ReactionRemoved: ConversationRouting & { messageId: string; emoji: string; userId: string };
  MessagePinned: ConversationRouting & { messageId: string; pinnedBy: string; pinnedAt: string };
  MessageUnpinned: ConversationRouting & { messageId: string; unpinnedBy: string };
  ReadMarkerUpdated: ConversationRouting & { userId: string; messageId: string; readAt: string };
  DmRequestReceived: ConversationRouting & {
    requestId: string;
    fromId: string;
    toId: string;
    createdAt: string;
  };
  DmRequestAnswered: ConversationRouting & {
    requestId: string;
    fromId: string;
    toId: string;
    state: 'accepted' | 'declined';
  };
  TypingStarted: ConversationRouting & {
    user_id: string;
    username: string;
    display_name: string | null;
  };
  PresenceChanged: EventPayload & { userId: string; status: 'ONLINE' | 'AWAY' | 'OFFLINE' };
  SessionEnded: EventPayload;
  AccountUpdated: EventPayload;
}

// Every kind of EVENT_TYPES has a payload type, and nothing else does.
type Exact<A, B> = [A] extends [B] ? ([B] extends [A] ? true : never) : never;
export const eventMapCoversCatalog: Exact<keyof EventMap, EventType> = true;
