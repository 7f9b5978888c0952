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
