import type { Executor } from '../../db/database.js';
import type { LinkPreviewTable } from '../../db/tables/link-previews.js';

// The link_preview table's query functions (the area's only writer).

/** The stored previews of these messages, in link order. */
export async function previewsOf(db: Executor, messageIds: readonly string[]) {
  if (messageIds.length === 0) return [];
  return db
    .selectFrom('link_preview')
    .selectAll()
    .where('messageId', 'in', messageIds)
    .orderBy('messageId')
    .orderBy('position')
    .execute();
}

/** Replaces a message's previews with `rows`. */
export async function replacePreviews(
  db: Executor,
  messageId: string,
  rows: readonly LinkPreviewTable[],
): Promise<void> {
  await db.deleteFrom('link_preview').where('messageId', '=', messageId).execute();
  if (rows.length > 0)
    await db
      .insertInto('link_preview')
      .values([...rows])
      .execute();
}

/** Drops the previews of these messages (message removal). */
export async function deletePreviews(db: Executor, messageIds: readonly string[]): Promise<void> {
  if (messageIds.length === 0) return;
  await db.deleteFrom('link_preview').where('messageId', 'in', messageIds).execute();
}
