import type { ConversationMemberTable, ConversationTable } from '../../db/tables/conversations.js';

/** A member row of a conversation. */
export const memberRow = (
  conversationId: string,
  accountId: string,
  state: 'member' | 'pending',
  at: number,
): ConversationMemberTable => ({
  conversationId,
  accountId,
  state,
  joinedAt: at,
  lastReadAt: null,
  lastReadMessageId: null,
});

/** The conversation row out of an access row (drops the caller's membership columns). */
export function toRow(r: ConversationTable): ConversationTable {
  return {
    id: r.id,
    workspaceId: r.workspaceId,
    kind: r.kind,
    name: r.name,
    topic: r.topic,
    isPrivate: r.isPrivate,
    encrypted: r.encrypted,
    archivedAt: r.archivedAt,
    createdBy: r.createdBy,
    createdAt: r.createdAt,
    lastActivityAt: r.lastActivityAt,
  };
}
