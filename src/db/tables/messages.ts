// Row types of the tables services/messages owns (db/table-owners.ts): messages, their edits,
// reactions and pins. Timestamps in ms.

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
