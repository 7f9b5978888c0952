// The views the messages area answers: a message and an edit of one as the edges read them.
// They carry the stored fields under the same names, so a row read by queries.ts is one as it
// stands (no copy a message); the types stop at this surface, and no edge names a table.

/** A message. Timestamps in ms. */
export interface MessageView {
  id: string;
  conversationId: string;
  workspaceId: string;
  authorId: string;
  /** Null once deleted, and for an encrypted message (which carries `ciphertext`). */
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
  /** As stored: JSON `{ users, channels, here, channel? }`; read it with `readMentions`. */
  mentions: string | null;
}

/** One edit of a message: the text before it, who made it and when. */
export interface MessageEditView {
  id: string;
  messageId: string;
  previousText: string;
  editedAt: number;
  editorId: string;
}
