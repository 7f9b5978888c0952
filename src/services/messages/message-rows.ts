import { iso } from '../../lib/iso-time.js';
import type { ConversationTable } from '../../db/tables/conversations.js';
import type { MessageTable } from '../../db/tables/messages.js';
import { newId } from '../../lib/ids.js';

import { NO_MENTIONS, type StoredMentions } from './text.js';

/** The message fields events carry (docs/events.md). */
export function messagePayload(m: MessageTable) {
  return {
    id: m.id,
    conversationId: m.conversationId,
    serverId: m.workspaceId,
    authorId: m.authorId,
    text: m.deletedAt === null ? m.text : null,
    ciphertext: m.deletedAt === null ? m.ciphertext : null,
    threadRootId: m.threadRootId,
    forwardedFromId: m.forwardedFromId,
    createdAt: iso(m.createdAt),
    editedAt: iso(m.editedAt),
    mentions: m.mentions ? (JSON.parse(m.mentions) as StoredMentions) : NO_MENTIONS,
  };
}

/** A new message row of `conv` by `authorId`; `fields` sets what differs between kinds. */
export function newMessageRow(
  conv: Pick<ConversationTable, 'id' | 'workspaceId'>,
  authorId: string,
  now: number,
  fields: Pick<MessageTable, 'text' | 'mentions'> &
    Partial<Pick<MessageTable, 'threadRootId' | 'forwardedFromId'>>,
): MessageTable {
  return {
    id: newId(),
    conversationId: conv.id,
    workspaceId: conv.workspaceId,
    authorId,
    ciphertext: null,
    threadRootId: null,
    forwardedFromId: null,
    createdAt: now,
    editedAt: null,
    deletedAt: null,
    deletedBy: null,
    replyCount: 0,
    lastReplyAt: null,
    ...fields,
  };
}
