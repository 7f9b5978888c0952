// Row types of the tables services/conversations owns (db/table-owners.ts): conversations, their
// members and direct pairs. Timestamps in ms; booleans 0/1.

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

/**
 * The one DIRECT conversation of two people, per encryption mode: the unique key makes
 * `createConversation` reuse it even when both start one at the same moment.
 */
export interface DirectPairTable {
  /** `<smaller account id>:<larger account id>:<p|e>` (plain or encrypted). */
  pairKey: string;
  conversationId: string;
}
