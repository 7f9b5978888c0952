import type { Kysely } from 'kysely';

import { MS } from './helpers.js';

// Workspace plugins (docs/plugins.md): the bundles a workspace has (uploaded there; the bytes in
// the blob store, named by sha256) and its registry, one entry per plugin id.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('plugin_bundle')
    .addColumn('workspaceId', 'text', (c) => c.notNull())
    .addColumn('sha256', 'text', (c) => c.notNull())
    .addColumn('sizeBytes', MS, (c) => c.notNull())
    .addColumn('pluginId', 'text', (c) => c.notNull())
    .addColumn('version', 'text', (c) => c.notNull())
    // The bundle without its client code, as JSON: what the registry shows and checks against.
    .addColumn('manifest', 'text', (c) => c.notNull())
    .addColumn('uploadedBy', 'text', (c) => c.notNull())
    .addColumn('createdAt', MS, (c) => c.notNull())
    .addPrimaryKeyConstraint('plugin_bundle_pk', ['workspaceId', 'sha256'])
    .execute();
  // The blob sweep's "is this blob still named?".
  await db.schema
    .createIndex('plugin_bundle_sha256_idx')
    .on('plugin_bundle')
    .column('sha256')
    .execute();
  await db.schema
    .createTable('workspace_plugin')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspaceId', 'text', (c) => c.notNull())
    .addColumn('pluginId', 'text', (c) => c.notNull())
    .addColumn('bundleSha256', 'text', (c) => c.notNull())
    .addColumn('enabled', 'integer', (c) => c.notNull())
    .addColumn('settings', 'text', (c) => c.notNull())
    .addColumn('addedBy', 'text', (c) => c.notNull())
    .addColumn('createdAt', MS, (c) => c.notNull())
    .addColumn('updatedAt', MS, (c) => c.notNull())
    .addUniqueConstraint('workspace_plugin_plugin_uq', ['workspaceId', 'pluginId'])
    .execute();
}

export async function down(): Promise<void> {
  throw new Error('migrations are append-only; restore from a backup to go back');
}
