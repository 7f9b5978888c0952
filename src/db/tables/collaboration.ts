// Row types of workspaces, conversations and messages. Timestamps in ms; booleans 0/1.

export type WorkspaceRole = 'owner' | 'moderator' | 'member' | 'guest';

export interface WorkspaceTable {
  id: string;
  name: string;
  description: string | null;
  /** Null only for the direct space. */
  ownerId: string | null;
  /** 1 for the one direct space that holds direct and group conversations. */
  isDirect: number;
  createdAt: number;
  updatedAt: number;
}

export interface WorkspaceMemberTable {
  workspaceId: string;
  accountId: string;
  role: WorkspaceRole;
  joinedAt: number;
  /** A timeout set by a Moderator or the owner: no writes until then. */
  timedOutUntil: number | null;
}

export type ConversationKind = 'channel' | 'direct' | 'group';

export interface ConversationTable {
  id: string;
  workspaceId: string;
  kind: ConversationKind;
  /** Channel or group name; null for a direct conversation. */
  name: string | null;
  topic: string | null;
  /** 1 for a private channel (members only). */
  isPrivate: number;
  /** 1 for an end-to-end encrypted conversation. */
  encrypted: number;
  archivedAt: number | null;
  createdBy: string;
  createdAt: number;
  /** Newest message time (or creation), for inbox order. */
  lastActivityAt: number;
}

export interface ConversationMemberTable {
  conversationId: string;
  accountId: string;
  /** `member`, or `pending` for an invitee of an encrypted conversation who has not accepted. */
  state: 'member' | 'pending';
  joinedAt: number;
  /** Read marker: the newest message the member has read (time and id). */
  lastReadAt: number | null;
  lastReadMessageId: string | null;
  /** When the member accepted an invitation to an encrypted conversation; null otherwise. */
  acceptedInviteAt?: number | null;
}

export interface WorkspaceInviteTable {
  id: string;
  workspaceId: string;
  /** SHA-256 of the invite token, base64url. */
  tokenHash: string;
  createdBy: string;
  createdAt: number;
  expiresAt: number | null;
  maxUses: number | null;
  uses: number;
  revokedAt: number | null;
  email: string | null;
  /** Role given on joining: `member` or `guest`. */
  role: 'member' | 'guest';
  /** JSON array of channel ids a guest is given. */
  guestChannelIds: string | null;
}

export interface MessageTable {
  id: string;
  conversationId: string;
  workspaceId: string;
  authorId: string;
  /** Null once deleted (and for encrypted messages, which carry `ciphertext`). */
  text: string | null;
  ciphertext: string | null;
  threadRootId: string | null;
  forwardedFromId: string | null;
  createdAt: number;
  editedAt: number | null;
  deletedAt: number | null;
  deletedBy: string | null;
  replyCount: number;
  lastReplyAt: number | null;
  /** JSON: { users: string[], channels: string[], here: boolean }. */
  mentions: string | null;
}

export interface MessageEditTable {
  id: string;
  messageId: string;
  /** The text before this edit. */
  previousText: string;
  editedAt: number;
  editorId: string;
}

export interface ReactionTable {
  messageId: string;
  accountId: string;
  emoji: string;
  createdAt: number;
}

export interface PinTable {
  conversationId: string;
  messageId: string;
  pinnedBy: string;
  pinnedAt: number;
}

export interface DmSettingsTable {
  accountId: string;
  inbound: string;
  outbound: string;
  partners: string;
}

export interface DmRequestTable {
  id: string;
  fromId: string;
  toId: string;
  conversationId: string;
  state: 'pending' | 'accepted' | 'declined';
  createdAt: number;
  respondedAt: number | null;
}

export interface UserBlockTable {
  blockerId: string;
  blockedId: string;
  createdAt: number;
}
