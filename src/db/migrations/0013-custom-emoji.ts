import type { Kysely } from 'kysely';

import { MS } from './helpers.js';

// Custom emoji of a workspace (docs/files.md, "Custom emoji"): the image is a blob of the blob
// store, named here by its served path `avatars/<sha256>.<ext>`.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('custom_emoji')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspaceId', 'text', (c) =>
      c.notNull().references('workspace.id').onDelete('cascade'),
    )
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('imagePath', 'text', (c) => c.notNull())
    .addColumn('contentType', 'text', (c) => c.notNull())
    .addColumn('width', 'integer', (c) => c.notNull())
    .addColumn('height', 'integer', (c) => c.notNull())
    .addColumn('createdBy', 'text')
    .addColumn('createdAt', MS, (c) => c.notNull())
    .execute();
  // Names are case-folded before they are stored, so this is the case-insensitive uniqueness.
  await db.schema
    .createIndex('custom_emoji_name_idx')
    .on('custom_emoji')
    .columns(['workspaceId', 'name'])
    .unique()
    .execute();
  // GET /api/files/avatars/... and the blob sweep look emoji up by image.
  await db.schema
    .createIndex('custom_emoji_image_idx')
    .on('custom_emoji')
    .column('imagePath')
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('custom_emoji').execute();
}
