import type { Executor } from '../../db/database.js';
import type { CustomEmojiTable } from '../../db/tables/emoji.js';
import { keysetQuery, type KeysetPage } from '../paging/index.js';

/** A page of a workspace's custom emoji, oldest first. */
export async function customEmojiPage(db: Executor, workspaceId: string, page: KeysetPage) {
  const q = db.selectFrom('custom_emoji').selectAll().where('workspaceId', '=', workspaceId);
  return keysetQuery(q, { at: 'createdAt', key: 'id' }, 'asc', page).execute();
}

export async function countCustomEmoji(db: Executor, workspaceId: string): Promise<number> {
  const row = await db
    .selectFrom('custom_emoji')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('workspaceId', '=', workspaceId)
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

export async function findCustomEmoji(db: Executor, workspaceId: string, name: string) {
  return db
    .selectFrom('custom_emoji')
    .selectAll()
    .where('workspaceId', '=', workspaceId)
    .where('name', '=', name)
    .executeTakeFirst();
}

export async function insertCustomEmoji(db: Executor, row: CustomEmojiTable) {
  await db.insertInto('custom_emoji').values(row).execute();
}

/** Deletes one emoji; whether there was one. */
export async function deleteCustomEmoji(
  db: Executor,
  workspaceId: string,
  name: string,
): Promise<boolean> {
  const res = await db
    .deleteFrom('custom_emoji')
    .where('workspaceId', '=', workspaceId)
    .where('name', '=', name)
    .executeTakeFirst();
  return Number(res.numDeletedRows) > 0;
}

/** Every emoji of a workspace (its deletion). */
export async function deleteWorkspaceEmoji(db: Executor, workspaceId: string) {
  await db.deleteFrom('custom_emoji').where('workspaceId', '=', workspaceId).execute();
}

/** Whether some emoji's image is this path. */
export async function emojiImageInUse(db: Executor, imagePath: string): Promise<boolean> {
  const row = await db
    .selectFrom('custom_emoji')
    .select('id')
    .where('imagePath', '=', imagePath)
    .executeTakeFirst();
  return row !== undefined;
}

/** Which of these image paths some emoji still uses (the blob sweep's reference source). */
export async function emojiImagePathsAmong(
  db: Executor,
  paths: readonly string[],
): Promise<string[]> {
  if (paths.length === 0) return [];
  const rows = await db
    .selectFrom('custom_emoji')
    .select('imagePath')
    .where('imagePath', 'in', paths)
    .execute();
  return rows.map((r) => r.imagePath);
}
