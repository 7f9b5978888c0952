import type { Kysely } from 'kysely';

import type { Database } from '../../db/schema.js';
import type { AttachmentTable } from '../../db/tables/attachments.js';
import type { ConversationTable } from '../../db/tables/conversations.js';
import type { MessageEditTable, MessageTable, PinTable, ReactionTable } from '../../db/tables/messages.js';

import { flag, iso } from './format.js';
import type { ExportWriter, PartWriter } from './writer.js';

// Rows as export records (docs/export.schema.json): times as ISO 8601, flags as booleans, JSON
// columns parsed, stored files as their path in the export. Shared by both scopes.

export function conversationRecord(c: ConversationTable) {
  return {
    id: c.id,
    workspaceId: c.workspaceId,
    kind: c.kind,
    name: c.name,
    topic: c.topic,
    private: flag(c.isPrivate),
    encrypted: flag(c.encrypted),
    archivedAt: iso(c.archivedAt),
    createdBy: c.createdBy,
    createdAt: iso(c.createdAt),
  };
}

export function messageRecord(m: MessageTable) {
  return {
    id: m.id,
    conversationId: m.conversationId,
    authorId: m.authorId,
    text: m.text,
    ciphertext: m.ciphertext,
    threadRootId: m.threadRootId,
    forwardedFromId: m.forwardedFromId,
    createdAt: iso(m.createdAt),
    editedAt: iso(m.editedAt),
    deletedAt: iso(m.deletedAt),
    mentions: m.mentions ? (JSON.parse(m.mentions) as unknown) : null,
  };
}

const editRecord = (e: MessageEditTable) => ({
  messageId: e.messageId,
  previousText: e.previousText,
  editedAt: iso(e.editedAt),
  editorId: e.editorId,
});

const reactionRecord = (r: ReactionTable) => ({
  messageId: r.messageId,
  accountId: r.accountId,
  emoji: r.emoji,
  createdAt: iso(r.createdAt),
});

const pinRecord = (p: PinTable) => ({
  conversationId: p.conversationId,
  messageId: p.messageId,
  pinnedBy: p.pinnedBy,
  pinnedAt: iso(p.pinnedAt),
});

async function attachmentRecord(a: AttachmentTable, out: ExportWriter) {
  return {
    id: a.id,
    messageId: a.messageId,
    conversationId: a.conversationId,
    uploaderId: a.uploaderId,
    fileName: a.fileName,
    contentType: a.contentType,
    sizeBytes: a.sizeBytes,
    width: a.width,
    height: a.height,
    sha256: a.sha256,
    file: await out.file(a.sha256),
    uploadedAt: iso(a.uploadedAt),
  };
}

/** The parts a page of messages writes into. */
export interface MessageParts {
  messages: PartWriter;
  edits: PartWriter | null;
  reactions: PartWriter | null;
  pins: PartWriter | null;
  attachments: PartWriter;
}

/**
 * Writes a page of messages and what hangs off them: their edits, reactions and pins (when the
 * scope exports those) and their finalized attachments with the files.
 */
export async function writeMessagePage(
  db: Kysely<Database>,
  page: MessageTable[],
  parts: MessageParts,
  out: ExportWriter,
): Promise<void> {
  if (page.length === 0) return;
  const ids = page.map((m) => m.id);
  for (const m of page) await parts.messages.write(messageRecord(m));
  if (parts.edits) {
    const rows = await db
      .selectFrom('message_edit')
      .selectAll()
      .where('messageId', 'in', ids)
      .orderBy('editedAt')
      .orderBy('id')
      .execute();
    for (const e of rows) await parts.edits.write(editRecord(e));
  }
  if (parts.reactions) {
    const rows = await db
      .selectFrom('reaction')
      .selectAll()
      .where('messageId', 'in', ids)
      .orderBy('createdAt')
      .execute();
    for (const r of rows) await parts.reactions.write(reactionRecord(r));
  }
  if (parts.pins) {
    const rows = await db.selectFrom('pin').selectAll().where('messageId', 'in', ids).execute();
    for (const p of rows) await parts.pins.write(pinRecord(p));
  }
  const files = await db
    .selectFrom('attachment')
    .selectAll()
    .where('messageId', 'in', ids)
    .where('finalizedAt', 'is not', null)
    .orderBy('createdAt')
    .orderBy('id')
    .execute();
  for (const a of files) await parts.attachments.write(await attachmentRecord(a, out));
}

export { reactionRecord };
