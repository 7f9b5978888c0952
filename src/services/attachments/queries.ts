import type { Executor } from '../../db/database.js';
import type { AttachmentTable } from '../../db/tables/attachments.js';

// The attachment table's only writer (src/db/table-owners.ts), and its reads.

/** Rows per statement: below SQLite's bound-parameter limit with room to spare. */
const CHUNK = 500;

export async function insertAttachment(db: Executor, row: AttachmentTable): Promise<void> {
  await db.insertInto('attachment').values(row).execute();
}

export async function findAttachment(db: Executor, id: string) {
  return db.selectFrom('attachment').selectAll().where('id', '=', id).executeTakeFirst();
}

/**
 * Records an upload, spending its token: only while the token still matches and no upload was
 * recorded, so of two uploads with one token exactly one succeeds. Returns whether it did.
 */
export async function recordUpload(
  db: Executor,
  id: string,
  tokenHash: string,
  file: {
    sha256: string;
    sizeBytes: number;
    contentType: string;
    width: number | null;
    height: number | null;
    at: number;
  },
): Promise<boolean> {
  const res = await db
    .updateTable('attachment')
    .set({
      sha256: file.sha256,
      sizeBytes: file.sizeBytes,
      contentType: file.contentType,
      width: file.width,
      height: file.height,
      uploadedAt: file.at,
    })
    .where('id', '=', id)
    .where('uploadTokenHash', '=', tokenHash)
    .where('uploadedAt', 'is', null)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) === 1;
}

/** Attaches an uploaded, unattached row to a message; returns whether it did. */
export async function attachToMessage(
  db: Executor,
  id: string,
  messageId: string,
  at: number,
): Promise<boolean> {
  const res = await db
    .updateTable('attachment')
    .set({ messageId, finalizedAt: at })
    .where('id', '=', id)
    .where('messageId', 'is', null)
    .where('uploadedAt', 'is not', null)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) === 1;
}

export async function countOnMessage(db: Executor, messageId: string): Promise<number> {
  const row = await db
    .selectFrom('attachment')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('messageId', '=', messageId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function deleteAttachmentRow(db: Executor, id: string): Promise<boolean> {
  const res = await db.deleteFrom('attachment').where('id', '=', id).executeTakeFirst();
  return Number(res.numDeletedRows) === 1;
}

/** The attachments of messages, in the order they were attached. */
export async function attachmentsOfMessages(db: Executor, messageIds: readonly string[]) {
  const out: AttachmentTable[] = [];
  for (let i = 0; i < messageIds.length; i += CHUNK) {
    out.push(
      ...(await db
        .selectFrom('attachment')
        .selectAll()
        .where('messageId', 'in', messageIds.slice(i, i + CHUNK))
        .orderBy('finalizedAt')
        .orderBy('id')
        .execute()),
    );
  }
  return out;
}

export async function deleteForMessages(db: Executor, messageIds: readonly string[]) {
  for (let i = 0; i < messageIds.length; i += CHUNK) {
    await db
      .deleteFrom('attachment')
      .where('messageId', 'in', messageIds.slice(i, i + CHUNK))
      .execute();
  }
}

export async function deleteForWorkspace(db: Executor, workspaceId: string): Promise<void> {
  await db.deleteFrom('attachment').where('workspaceId', '=', workspaceId).execute();
}

export async function deleteForUploader(db: Executor, accountId: string): Promise<void> {
  await db.deleteFrom('attachment').where('uploaderId', '=', accountId).execute();
}

/** Removes attachments never finalized that were created before `cutoff`; returns how many. */
export async function deleteUnfinalizedBefore(db: Executor, cutoff: number): Promise<number> {
  const res = await db
    .deleteFrom('attachment')
    .where('messageId', 'is', null)
    .where('createdAt', '<', cutoff)
    .executeTakeFirst();
  return Number(res.numDeletedRows);
}

/**
 * Removes attachments left on a message that is deleted or gone: a finalize that raced the
 * message's removal (the removal hook ran before the attachment named the message).
 */
export async function deleteOnRemovedMessages(db: Executor): Promise<number> {
  const res = await db
    .deleteFrom('attachment')
    .where('messageId', 'is not', null)
    .where((eb) =>
      eb.not(
        eb.exists(
          eb
            .selectFrom('message')
            .select('message.id')
            .whereRef('message.id', '=', 'attachment.messageId')
            .where('message.deletedAt', 'is', null),
        ),
      ),
    )
    .executeTakeFirst();
  return Number(res.numDeletedRows);
}

/** Which of the blob names some attachment still uses (the blob sweep's question). */
export async function referencedBlobs(db: Executor, names: readonly string[]): Promise<string[]> {
  if (names.length === 0) return [];
  const rows = await db
    .selectFrom('attachment')
    .select('sha256')
    .distinct()
    .where('sha256', 'in', names)
    .execute();
  return rows.map((r) => r.sha256!);
}

/** The message finalizeAttachment names, as much as it needs of it. */
export async function findMessageForAttaching(db: Executor, messageId: string) {
  return db
    .selectFrom('message')
    .select(['id', 'conversationId', 'authorId', 'deletedAt'])
    .where('id', '=', messageId)
    .executeTakeFirst();
}
