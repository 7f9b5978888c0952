import type { Kysely } from 'kysely';

import { MS } from './helpers.js';

// Link previews kept with their message (docs/link-previews.md): one row per previewed link, in
// the order the links appear. They go with the message row, and the removal hook drops them when
// the message is deleted.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('link_preview')
    .addColumn('messageId', 'text', (c) => c.notNull().references('message.id').onDelete('cascade'))
    .addColumn('position', 'integer', (c) => c.notNull())
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('title', 'text')
    .addColumn('description', 'text')
    .addColumn('imageUrl', 'text')
    .addColumn('siteName', 'text')
    .addColumn('mimeType', 'text')
    .addColumn('size', MS)
    .addColumn('fetchedAt', MS, (c) => c.notNull())
    .addPrimaryKeyConstraint('link_preview_pk', ['messageId', 'position'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('link_preview').execute();
}
