import type { MessageEditTable, MessageTable } from '../../db/tables/messages.js';

// The views the messages area answers: a message and an edit of one as the edges read them.
// Their fields are stored columns as they stand (no integer booleans), so each is declared as
// the columns it shows, and a row read by queries.ts serves as one, with no copy per message; the edges
// name these types, never a table's.

/**
 * A message. `text` is null once deleted and for an encrypted message (which carries
 * `ciphertext`); `mentions` is as stored (JSON, read it with `readMentions`).
 */
export type MessageView = Pick<
  MessageTable,
  | 'id'
  | 'conversationId'
  | 'workspaceId'
  | 'authorId'
  | 'text'
  | 'ciphertext'
  | 'threadRootId'
  | 'forwardedFromId'
  | 'createdAt'
  | 'editedAt'
  | 'deletedAt'
  | 'deletedBy'
  | 'replyCount'
  | 'lastReplyAt'
  | 'mentions'
>;

/** One edit of a message: the text before it, who made it and when. */
export type MessageEditView = Pick<
  MessageEditTable,
  'id' | 'messageId' | 'previousText' | 'editedAt' | 'editorId'
>;
