import type { Kysely } from 'kysely';

import { MS } from './helpers.js';

// Attachments (docs/files.md, "Attachments"): a row per file a person attaches, created with an
// upload token, filled in by the upload, attached to a message by finalizeAttachment. The bytes
// live in the blob store, named by `sha256`.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('attachment')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('conversationId', 'text', (c) => c.notNull())
    .addColumn('workspaceId', 'text', (c) => c.notNull())
    .addColumn('uploaderId', 'text', (c) => c.notNull())
    .addColumn('fileName', 'text', (c) => c.notNull())
    .addColumn('contentType', 'text')
    .addColumn('uploadTokenHash', 'text', (c) => c.notNull())
    .addColumn('uploadExpiresAt', MS, (c) => c.notNull())
    .addColumn('sha256', 'text')
    .addColumn('sizeBytes', MS)
    .addColumn('width', 'integer')
    .addColumn('height', 'integer')
    .addColumn('uploadedAt', MS)
    .addColumn('messageId', 'text')
    .addColumn('finalizedAt', MS)
    .addColumn('createdAt', MS, (c) => c.notNull())
    .execute();
  // A page's attachments by message; the expiry job's scan of unfinalized rows (messageId null).
  await db.schema
    .createIndex('attachment_message_idx')
    .on('attachment')
    .columns(['messageId', 'createdAt'])
    .execute();
  // Workspace deletion, account purge, and the blob sweep's "is this blob still named?".
  await db.schema
    .createIndex('attachment_workspace_idx')
    .on('attachment')
    .column('workspaceId')
    .execute();
  await db.schema
    .createIndex('attachment_uploader_idx')
    .on('attachment')
    .column('uploaderId')
    .execute();
  await db.schema.createIndex('attachment_sha256_idx').on('attachment').column('sha256').execute();
}

export async function down(): Promise<void> {
  throw new Error('migrations are append-only; restore from a backup to go back');
}
